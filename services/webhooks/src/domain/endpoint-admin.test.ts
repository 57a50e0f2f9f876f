import { describe, expect, it } from 'vitest';
import { defaultOverlapSeconds, maxOverlapSeconds, overlapSecondsOf, pingPayload } from './endpoint-admin.js';

describe('rotation overlap', () => {
  it('defaults to 24 hours and accepts 0..7 days', () => {
    expect(overlapSecondsOf(undefined)).toBe(86_400);
    expect(defaultOverlapSeconds).toBe(86_400);
    expect(overlapSecondsOf(0)).toBe(0);
    expect(overlapSecondsOf(604_800)).toBe(604_800);
    expect(maxOverlapSeconds).toBe(7 * 24 * 3600);
  });

  it.each([-1, 604_801, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses %s', (value) => {
    expect(() => overlapSecondsOf(value)).toThrow(/overlapSeconds must be an integer from 0 to 604800/);
  });
});

describe('ping payload', () => {
  it('is the contract envelope with event "ping" and the webhook id as data, in this key order', () => {
    const at = new Date('2026-11-25T01:02:03.004Z');
    const body = pingPayload('evt_1', 'hook-1', at);
    expect(body.toString('utf8')).toBe('{"id":"evt_1","event":"ping","createdAt":"2026-11-25T01:02:03.004Z","data":{"webhookId":"hook-1"}}');
  });
});
