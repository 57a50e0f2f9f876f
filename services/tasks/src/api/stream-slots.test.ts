import { describe, expect, it } from 'vitest';
import { StreamSlots } from './stream-slots.js';

const never = new AbortController().signal;

describe('StreamSlots', () => {
  it('holds at most `limit`; the next waits for a release, in turn', async () => {
    const slots = new StreamSlots({ limit: 2, maxWaiting: 5, maxWaitMs: 5_000 });
    expect(await slots.acquire(never)).toBe(true);
    expect(await slots.acquire(never)).toBe(true);
    const order: string[] = [];
    const third = slots.acquire(never).then((granted) => order.push(`third ${granted}`));
    const fourth = slots.acquire(never).then((granted) => order.push(`fourth ${granted}`));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(order).toEqual([]);
    slots.release();
    await third;
    expect(order).toEqual(['third true']);
    expect(slots.inUse).toBe(2);
    slots.release();
    await fourth;
    expect(order).toEqual(['third true', 'fourth true']);
    slots.release();
    slots.release();
    expect(slots.inUse).toBe(0);
  });

  it('refuses at once past maxWaiting, and a waiter after maxWaitMs or when its call is cancelled, without taking a slot', async () => {
    const slots = new StreamSlots({ limit: 1, maxWaiting: 1, maxWaitMs: 20 });
    expect(await slots.acquire(never)).toBe(true);
    const cancel = new AbortController();
    const cancelled = slots.acquire(cancel.signal);
    expect(await slots.acquire(never)).toBe(false);
    cancel.abort();
    expect(await cancelled).toBe(false);
    expect(await slots.acquire(never)).toBe(false);
    slots.release();
    expect(slots.inUse).toBe(0);
    expect(await slots.acquire(never)).toBe(true);
  });
});
