import { describe, expect, it } from 'vitest';
import { KeyedBatcher } from './keyed-batcher.js';

interface Call {
  key: string;
  ids: string[];
  finish: (error?: Error) => void;
}

/** A batcher whose calls complete when the test says so; the outcomes count the items. */
function recordingBatcher(maxBatch?: number): { batcher: KeyedBatcher<string, number>; calls: Call[] } {
  const calls: Call[] = [];
  let next = 1;
  const run = (key: string, ids: string[]): Promise<number[]> =>
    new Promise((resolve, reject) => {
      calls.push({ key, ids, finish: (error) => (error ? reject(error) : resolve(ids.map(() => next++))) });
    });
  return { batcher: new KeyedBatcher(run, maxBatch), calls };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('KeyedBatcher', () => {
  it('sends a lone item at once and the ones that arrive meanwhile together in the next call', async () => {
    const { batcher, calls } = recordingBatcher();
    const first = batcher.submit('s1', 'a');
    expect(calls.map((call) => call.ids)).toStrictEqual([['a']]);
    const later = ['b', 'c', 'd'].map((id) => batcher.submit('s1', id));
    expect(calls).toHaveLength(1);

    calls[0]!.finish();
    expect(await first).toBe(1);
    await settle();
    expect(calls.map((call) => call.ids)).toStrictEqual([['a'], ['b', 'c', 'd']]);
    calls[1]!.finish();
    expect(await Promise.all(later)).toStrictEqual([2, 3, 4]);

    // Idle again: the next creation goes out at once.
    void batcher.submit('s1', 'e');
    expect(calls.map((call) => call.ids).at(-1)).toStrictEqual(['e']);
  });

  it('keeps keys apart and caps a call at maxBatch items', async () => {
    const { batcher, calls } = recordingBatcher(2);
    void batcher.submit('s1', 'a');
    void batcher.submit('s2', 'x');
    for (const id of ['b', 'c', 'd']) void batcher.submit('s1', id);
    expect(calls.map((call) => call.ids)).toStrictEqual([['a'], ['x']]);

    calls[0]!.finish();
    await settle();
    calls[2]!.finish();
    await settle();
    expect(calls.map((call) => [call.key, call.ids])).toStrictEqual([
      ['s1', ['a']],
      ['s2', ['x']],
      ['s1', ['b', 'c']],
      ['s1', ['d']],
    ]);
  });

  it('fails only the items of a failed call', async () => {
    const { batcher, calls } = recordingBatcher();
    const first = batcher.submit('s1', 'a');
    const second = batcher.submit('s1', 'b');
    calls[0]!.finish(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await settle();
    calls[1]!.finish();
    expect(await second).toBe(1);
  });
});
