import { describe, expect, it } from 'vitest';
import { attemptOfTopic, nextStep, parseRetryDelays, retryTopics } from './schedule.js';

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
  ])('after failed attempt %i waits on %s until %s', (attempt, topic, due) => {
    expect(nextStep(attempt, false, failedAt, delays)).toEqual({ kind: 'retry', attempt: attempt + 1, topic, dueAt: new Date(due) });
  });

  it('gives up after the 5th failure', () => {
    expect(nextStep(5, false, failedAt, delays)).toEqual({ kind: 'dead' });
  });

  it('keeps the contract topic names with shortened delays', () => {
    const step = nextStep(1, false, failedAt, parseRetryDelays('1s,1s,1s,1s'));
    expect(step).toEqual({ kind: 'retry', attempt: 2, topic: 'webhooks.retry.5m', dueAt: new Date('2026-11-22T10:00:01.000Z') });
  });

  it('rejects attempts outside 1..5', () => {
    expect(() => nextStep(0, false, failedAt, delays)).toThrow(RangeError);
    expect(() => nextStep(6, false, failedAt, delays)).toThrow(RangeError);
  });

  it('maps topics back to attempts', () => {
    expect(retryTopics.map(attemptOfTopic)).toEqual([2, 3, 4, 5]);
    expect(attemptOfTopic('task-events.v1')).toBeUndefined();
  });
});
