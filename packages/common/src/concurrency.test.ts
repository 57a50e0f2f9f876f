import { describe, expect, it } from 'vitest';
import { KeyedSerializer, MicroBatcher, Semaphore } from './concurrency.js';

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Semaphore', () => {
  it('admits at most the limit, first come first served', async () => {
    const semaphore = new Semaphore(2);
    const order: number[] = [];
    let running = 0;
    let peak = 0;
    await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        semaphore.run(async () => {
          running += 1;
          peak = Math.max(peak, running);
          order.push(n);
          await tick(5);
          running -= 1;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(order).toEqual([1, 2, 3, 4, 5]);
  });

  it('applies a lower limit as holders release and a higher one at once', async () => {
    const semaphore = new Semaphore(4);
    const releases: Array<() => void> = [];
    let running = 0;
    const hold = () =>
      semaphore.run(async () => {
        running += 1;
        await new Promise<void>((resolve) => releases.push(resolve));
        running -= 1;
      });
    const all = Array.from({ length: 8 }, hold);
    await tick();
    expect(running).toBe(4);
    semaphore.setLimit(1);
    releases.splice(0, 4).forEach((release) => release());
    await tick();
    expect(running).toBe(1);
    semaphore.setLimit(3);
    await tick();
    expect(running).toBe(3);
    while (releases.length > 0) {
      releases.splice(0).forEach((release) => release());
      await tick();
    }
    await Promise.all(all);
    expect(semaphore.inUse).toBe(0);
  });
  it('takes a free place at once with tryAcquire, never one a waiter is owed', async () => {
    const semaphore = new Semaphore(1);
    expect(semaphore.tryAcquire()).toBe(true);
    expect(semaphore.tryAcquire()).toBe(false);
    const served: string[] = [];
    const waiter = semaphore.acquire().then(() => served.push('waiter'));
    expect(semaphore.queued).toBe(1);
    // The holder gives its place to the waiter: nothing is free for a newcomer meanwhile.
    semaphore.release();
    expect(semaphore.tryAcquire()).toBe(false);
    await waiter;
    expect(served).toEqual(['waiter']);
    expect(semaphore.inUse).toBe(1);
    semaphore.release();
    expect(semaphore.inUse).toBe(0);
    expect(semaphore.tryAcquire()).toBe(true);
    semaphore.release();
  });
});

describe('KeyedSerializer', () => {
  it('runs work of one key in submission order, other keys alongside, and survives failures', async () => {
    const serializer = new KeyedSerializer();
    const log: string[] = [];
    const work = (name: string, ms: number, fail = false) => async () => {
      log.push(`start ${name}`);
      await tick(ms);
      log.push(`end ${name}`);
      if (fail) throw new Error(name);
    };
    const a1 = serializer.run('a', work('a1', 20, true));
    const a2 = serializer.run('a', work('a2', 1));
    const b1 = serializer.run('b', work('b1', 1));
    await expect(a1).rejects.toThrow('a1');
    await Promise.all([a2, b1]);
    expect(log.indexOf('end a1')).toBeLessThan(log.indexOf('start a2'));
    expect(log.indexOf('end b1')).toBeLessThan(log.indexOf('end a1'));
    expect(serializer.size).toBe(0);
  });

  it('starts work with nothing ahead at once; a synchronous throw rejects and frees the key', async () => {
    const serializer = new KeyedSerializer();
    let started = false;
    const first = serializer.run('a', async () => {
      started = true;
      await tick(1);
    });
    expect(started).toBe(true);
    await first;
    const thrown = serializer.run('b', () => {
      throw new Error('at once');
    });
    await expect(thrown).rejects.toThrow('at once');
    await expect(serializer.run('b', async () => 'next')).resolves.toBe('next');
    await tick();
    expect(serializer.size).toBe(0);
  });
});

describe('MicroBatcher', () => {
  it('batches items and hands each caller its result; caps concurrent flushes', async () => {
    const batches: number[][] = [];
    let concurrent = 0;
    let peak = 0;
    const batcher = new MicroBatcher<number, number>(
      async (items) => {
        concurrent += 1;
        peak = Math.max(peak, concurrent);
        batches.push(items);
        await tick(10);
        concurrent -= 1;
        return items.map((item) => item * 2);
      },
      { maxItems: 3, maxDelayMs: 2, maxConcurrentFlushes: 1 },
    );
    const results = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => batcher.add(n)));
    expect(results).toEqual([2, 4, 6, 8, 10, 12, 14]);
    expect(peak).toBe(1);
    expect(batches.flat()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(batches.every((batch) => batch.length <= 3)).toBe(true);
  });

  it('rejects every caller of a failed flush', async () => {
    const batcher = new MicroBatcher<number, number>(async () => Promise.reject(new Error('db down')), { maxItems: 10, maxDelayMs: 1 });
    await expect(Promise.all([batcher.add(1), batcher.add(2)])).rejects.toThrow('db down');
  });
});
