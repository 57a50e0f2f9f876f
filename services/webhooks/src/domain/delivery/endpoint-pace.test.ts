import { afterEach, describe, expect, it, vi } from 'vitest';
import { EndpointPace, type PaceTicket } from './endpoint-pace.js';

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
  const pace = (saturated = false) => new EndpointPace({ concurrency: 4, queueLimit: 100, maxQueueWaitMs: 2_000, saturated: () => saturated });

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

  /** `count` deliveries waiting at each of `endpointIds`, each endpoint known to answer in 10 ms. */
  const waitingAt = (endpoints: EndpointPace, count: Record<string, number>): Map<string, PaceTicket[]> => {
    const tickets = new Map<string, PaceTicket[]>();
    for (const [endpointId, waiting] of Object.entries(count)) {
      for (let index = 0; index < 5; index++) attemptTaking(endpoints, endpointId, 10);
      tickets.set(endpointId, Array.from({ length: waiting }, () => endpoints.enter(endpointId)));
    }
    return tickets;
  };

  it('parks nothing of quick endpoints that are behind together in a saturated replica, past the limit and the wait', () => {
    vi.useFakeTimers();
    const saturated = pace(true);
    const idle = pace(false);
    for (const endpoints of [saturated, idle]) waitingAt(endpoints, { a: 150, b: 120, c: 90 });
    vi.advanceTimersByTime(2_001);
    // Saturated: the wait is the replica's; each holds under twice the average (120).
    for (const endpointId of ['a', 'b', 'c']) expect(saturated.room(endpointId)).toBeGreaterThan(1_000_000);
    // Not saturated: the wait rule parks, as before.
    for (const endpointId of ['a', 'b', 'c']) expect(idle.room(endpointId)).toBe(0);
  });

  it('still parks, in a saturated replica, a quick endpoint holding more than twice the average', () => {
    vi.useFakeTimers();
    const endpoints = pace(true);
    const tickets = waitingAt(endpoints, { big: 150, small: 20, other: 20 });
    // The average is 63.3: 150 is more than twice that, 20 is not.
    expect(endpoints.room('big')).toBe(0); // over the limit of 100
    expect(endpoints.room('small')).toBeGreaterThan(1_000_000);
    vi.advanceTimersByTime(2_001);
    expect(endpoints.room('big')).toBe(0); // and over the wait
    expect(endpoints.room('other')).toBeGreaterThan(1_000_000);
    // 90 of its deliveries leave: at 60 it holds under twice the average, (60 + 20 + 20) / 3 = 33.3.
    for (const ticket of tickets.get('big')!.slice(0, 90)) endpoints.leave(ticket);
    expect(endpoints.load('big')).toBe(60);
    expect(endpoints.room('big')).toBeGreaterThan(1_000_000);
  });

  it('still paces a slow or hanging endpoint of a saturated replica', () => {
    vi.useFakeTimers();
    const endpoints = pace(true);
    attemptTaking(endpoints, 'slow', 1_000);
    for (let index = 0; index < 4; index++) endpoints.enter('slow');
    expect(endpoints.capacity('slow')).toBe(8); // 1 s per attempt, 4 at a time: 8 within 2 s
    for (let index = 0; index < 4; index++) endpoints.started(endpoints.enter('hanging'));
    vi.advanceTimersByTime(5_000);
    expect(endpoints.capacity('hanging')).toBe(1);
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
