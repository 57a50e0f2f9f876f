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
    const id = 'evt_0b7c6a52-3f1e-4d2a-9c8b-7e6f5a4d3c21';
    const body = pingPayload(id, 'hook-1', at);
    expect(body.toString('utf8')).toBe(`{"id":"${id}","event":"ping","createdAt":"2026-11-25T01:02:03.004Z","data":{"webhookId":"hook-1"}}`);
  });

  it('is checked against the contract schema it is documented with: a malformed event id is refused', () => {
    expect(() => pingPayload('evt_1', 'hook-1', new Date())).toThrow();
  });
});
