import { describe, expect, it } from 'vitest';
import { jittered, nextStep, parseRetryDelays, retryJitter } from './schedule.js';

describe('parseRetryDelays', () => {
  it('parses the contract defaults', () => {
    expect(parseRetryDelays('5m,30m,2h,8h')).toEqual([300_000, 1_800_000, 7_200_000, 28_800_000]);
  });
  it('parses short test delays', () => {
    expect(parseRetryDelays('1s, 1.5s ,500ms,2s')).toEqual([1_000, 1_500, 500, 2_000]);
  });
  it.each(['5m,30m,2h', '5m,30m,2h,8h,1d', '5m,30x,2h,8h', '0s,1s,1s,1s', '', '-1s,1s,1s,1s'])('rejects %j', (value) => {
    expect(() => parseRetryDelays(value)).toThrow();
  });
});

describe('nextStep', () => {
  const delays = parseRetryDelays('5m,30m,2h,8h');
  const failedAt = new Date('2026-11-22T10:00:00.000Z');

  it('stops after a success', () => {
    expect(nextStep(1, true, failedAt, delays)).toEqual({ kind: 'done' });
    expect(nextStep(5, true, failedAt, delays)).toEqual({ kind: 'done' });
  });

  it.each([
    [1, 'webhooks.retry.5m', '2026-11-22T10:05:00.000Z'],
    [2, 'webhooks.retry.30m', '2026-11-22T10:30:00.000Z'],
    [3, 'webhooks.retry.2h', '2026-11-22T12:00:00.000Z'],
    [4, 'webhooks.retry.8h', '2026-11-22T18:00:00.000Z'],
  ])('after failed attempt %i waits on %s until %s (jitter at its midpoint)', (attempt, topic, due) => {
    expect(nextStep(attempt, false, failedAt, delays, () => 0.5)).toEqual({ kind: 'retry', attempt: attempt + 1, topic, dueAt: new Date(due) });
  });

  it('gives up after the 5th failure', () => {
    expect(nextStep(5, false, failedAt, delays)).toEqual({ kind: 'dead' });
  });

  it('keeps the contract topic names with shortened delays', () => {
    const step = nextStep(1, false, failedAt, parseRetryDelays('1s,1s,1s,1s'), () => 0.5);
    expect(step).toEqual({ kind: 'retry', attempt: 2, topic: 'webhooks.retry.5m', dueAt: new Date('2026-11-22T10:00:01.000Z') });
  });

  it('rejects attempts outside 1..5', () => {
    expect(() => nextStep(0, false, failedAt, delays)).toThrow(RangeError);
    expect(() => nextStep(6, false, failedAt, delays)).toThrow(RangeError);
  });
});

describe('retry jitter', () => {
  const delays = parseRetryDelays('5m,30m,2h,8h');
  const failedAt = new Date('2026-11-22T10:00:00.000Z');

  it('is ±10 % of the delay', () => {
    expect(retryJitter).toBe(0.1);
    expect(jittered(300_000, () => 0)).toBe(270_000);
    expect(jittered(300_000, () => 0.5)).toBe(300_000);
    expect(jittered(300_000, () => 0.999_999_9)).toBe(330_000);
  });

  it.each([
    [1, 300_000],
    [2, 1_800_000],
    [3, 7_200_000],
    [4, 28_800_000],
  ])('keeps every retry after failed attempt %i within ±10 %% of %i ms, spread over that range', (attempt, delayMs) => {
    const waits = Array.from({ length: 2_000 }, () => {
      const step = nextStep(attempt, false, failedAt, delays);
      if (step.kind !== 'retry') throw new Error('expected a retry');
      return step.dueAt.getTime() - failedAt.getTime();
    });
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(delayMs * 0.9);
    expect(Math.max(...waits)).toBeLessThanOrEqual(delayMs * 1.1);
    // Spread: the retries of deliveries that failed together do not come back at one instant.
    expect(new Set(waits).size).toBeGreaterThan(1_000);
    expect(Math.min(...waits)).toBeLessThan(delayMs * 0.95);
    expect(Math.max(...waits)).toBeGreaterThan(delayMs * 1.05);
  });
});
