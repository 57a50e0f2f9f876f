import { describe, expect, it } from 'vitest';
import { PartitionTracker } from './partition-tracker.js';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('PartitionTracker', () => {
  it('commits only past the longest finished prefix', async () => {
    const tracker = new PartitionTracker('t', 0);
    const work = ['10', '11', '12'].map((offset) => {
      const d = deferred();
      tracker.add(offset, d.promise);
      return d;
    });
    expect(tracker.committable()).toBeUndefined();
    work[1]!.resolve();
    work[2]!.resolve();
    await tick();
    expect(tracker.committable()).toBeUndefined();
    expect(tracker.unfinished).toBe(1);
    work[0]!.resolve();
    await tick();
    expect(tracker.committable()).toBe('13');
    tracker.committed('13');
    expect(tracker.committable()).toBeUndefined();
    expect(tracker.has('11')).toBe(false);
  });

  it('a failed message holds back later commits', async () => {
    const tracker = new PartitionTracker('t', 0);
    const first = deferred();
    const second = deferred();
    tracker.add('0', first.promise);
    tracker.add('1', second.promise);
    first.reject(new Error('boom'));
    second.resolve();
    await tick();
    expect(tracker.committable()).toBeUndefined();
    expect(tracker.unfinished).toBe(0);
  });

  it('handles gaps in offsets (compacted or transactional markers)', async () => {
    const tracker = new PartitionTracker('t', 3);
    tracker.add('5', Promise.resolve());
    tracker.add('9', Promise.resolve());
    await tick();
    expect(tracker.committable()).toBe('10');
  });
});
