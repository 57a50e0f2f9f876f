import { afterEach, describe, expect, it, vi } from 'vitest';
import { EndpointPace } from './endpoint-pace.js';

/** One attempt of `endpointId` that takes `ms` (fake timers), from entering to leaving. */
function attemptTaking(endpoints: EndpointPace, endpointId: string, ms: number): void {
  const ticket = endpoints.enter(endpointId);
  const ended = endpoints.started(ticket);
  vi.advanceTimersByTime(ms);
  ended();
  endpoints.leave(ticket);
}

describe('EndpointPace', () => {
  afterEach(() => vi.useRealTimers());
  const pace = () => new EndpointPace({ concurrency: 4, queueLimit: 100, maxQueueWaitMs: 2_000 });

  it('lets a fast endpoint queue up to the limit', () => {
    vi.useFakeTimers();
    const endpoints = pace();
    for (let index = 0; index < 10; index++) attemptTaking(endpoints, 'fast', 10);
    for (let index = 0; index < 50; index++) endpoints.enter('fast');
    // 10 ms per attempt, 4 at a time: 2 s of queue is far beyond the limit.
    expect(endpoints.load('fast')).toBe(50);
    expect(endpoints.capacity('fast')).toBe(100);
    expect(endpoints.room('fast')).toBe(50);
  });

  it('holds no more than it has in flight for a hanging endpoint, before any attempt ended', () => {
    vi.useFakeTimers();
    const endpoints = pace();
    for (let index = 0; index < 4; index++) endpoints.started(endpoints.enter('hanging'));
    expect(endpoints.capacity('hanging')).toBe(100); // nothing known yet
    vi.advanceTimersByTime(1_000);
    expect(endpoints.capacity('hanging')).toBe(8); // 4 per second: 2 s worth
    vi.advanceTimersByTime(4_000);
    expect(endpoints.capacity('hanging')).toBe(1);
    expect(endpoints.room('hanging')).toBe(0);
  });

  it('learns a slow pace from ended attempts', () => {
    vi.useFakeTimers();
    const endpoints = pace();
    attemptTaking(endpoints, 'slow', 1_000);
    const tickets = Array.from({ length: 4 }, () => endpoints.enter('slow'));
    // 1 s per attempt, 4 at a time: it finishes 8 within 2 s.
    expect(endpoints.capacity('slow')).toBe(8);
    endpoints.leave(tickets[0]!);
    expect(endpoints.capacity('slow')).toBe(100); // below its concurrency nothing waits
  });

  it('keeps the whole limit for an endpoint whose attempts take under half the wait (a busy replica, not a slow endpoint)', () => {
    vi.useFakeTimers();
    const endpoints = pace();
    attemptTaking(endpoints, 'busy', 700);
    const running = Array.from({ length: 4 }, () => endpoints.enter('busy'));
    const ends = running.map((ticket) => endpoints.started(ticket));
    for (let index = 0; index < 40; index++) endpoints.enter('busy');
    vi.advanceTimersByTime(900);
    // 700 ms a finished attempt, 900 ms the oldest in flight: not paced (that would be 4 × 2 s / 0.9 s = 8).
    expect(endpoints.capacity('busy')).toBe(100);
    expect(endpoints.room('busy')).toBe(56);
    for (const [index, end] of ends.entries()) {
      end();
      endpoints.leave(running[index]!);
    }
    // The wait rule still holds at that pace: nothing more once the oldest waiting delivery waited 2 s.
    expect(endpoints.room('busy')).toBe(60);
    vi.advanceTimersByTime(1_101);
    expect(endpoints.room('busy')).toBe(0);
  });

  it('takes nothing more once its oldest waiting delivery waited too long (starved by its workspace)', () => {
    vi.useFakeTimers();
    const endpoints = pace();
    for (let index = 0; index < 6; index++) endpoints.enter('starved');
    expect(endpoints.room('starved')).toBe(94);
    vi.advanceTimersByTime(2_001);
    expect(endpoints.room('starved')).toBe(0);
  });
});

describe('EndpointPace concurrency', () => {
  afterEach(() => vi.useRealTimers());

  it('starts at an eighth, is full once attempts are quick, and shrinks to a few for a hanging endpoint', () => {
    vi.useFakeTimers();
    const endpoints = new EndpointPace({ concurrency: 32, queueLimit: 500, maxQueueWaitMs: 2_000 });
    expect(endpoints.concurrency('e')).toBe(4);
    const quick = endpoints.enter('e');
    const endedQuick = endpoints.started(quick);
    vi.advanceTimersByTime(40);
    endedQuick();
    expect(endpoints.concurrency('e')).toBe(32);
    for (let index = 0; index < 20; index++) attemptTaking(endpoints, 'e', 10_000);
    // 10 s per attempt: 32 × 2 s / 10 s.
    expect(endpoints.concurrency('e')).toBe(6);
  });
});
