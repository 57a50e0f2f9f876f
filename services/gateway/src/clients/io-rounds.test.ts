import { describe, expect, it } from 'vitest';
import { afterIoRounds } from './io-rounds.js';

/** Resolves in the check phase of the event loop's next round (after that round's I/O). */
const nextRound = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('afterIoRounds', () => {
  it('dispatches after the given number of rounds of the event loop, not before', async () => {
    const dispatched: number[] = [];
    let round = 0;
    afterIoRounds(3)(() => dispatched.push(round));
    for (round = 1; round <= 4; round += 1) await nextRound();
    expect(dispatched).toEqual([3]);
  });
});
