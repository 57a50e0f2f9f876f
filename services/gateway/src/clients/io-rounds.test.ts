import { setImmediate as nextRound } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { afterIoRounds } from './io-rounds.js';

describe('afterIoRounds', () => {
  it('dispatches after the given number of rounds of the event loop, not before', async () => {
    const dispatched: number[] = [];
    let round = 0;
    afterIoRounds(3)(() => dispatched.push(round));
    for (round = 1; round <= 4; round += 1) await nextRound();
    expect(dispatched).toEqual([3]);
  });
});
