import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LoopSaturation, type LoopTimes } from './loop-saturation.js';

describe('LoopSaturation', () => {
  it('answers from the last whole window: saturated at the threshold, not below', () => {
    const times: LoopTimes = { idle: 0, active: 0 };
    const loop = new LoopSaturation({ threshold: 0.9, windowMs: 1_000, sample: () => ({ ...times }) }, 0);
    times.active += 950;
    times.idle += 50;
    expect(loop.saturated(999)).toBe(false); // the window has not passed: the one before (none) answers
    expect(loop.saturated(1_000)).toBe(true);
    times.active += 100;
    times.idle += 900;
    expect(loop.saturated(1_500)).toBe(true); // still the last whole window
    expect(loop.saturated(2_000)).toBe(false);
    times.active += 900;
    times.idle += 100;
    expect(loop.saturated(3_000)).toBe(true); // exactly the threshold
  });

  it('is not saturated over a window the loop did not run in (no time counted)', () => {
    const loop = new LoopSaturation({ sample: () => ({ idle: 0, active: 0 }) }, 0);
    expect(loop.saturated(5_000)).toBe(false);
  });

  it("reads this process's event loop: saturated after a second of synchronous work, not after a second of waiting", async () => {
    const loop = new LoopSaturation({ windowMs: 1_000 });
    const busyUntil = performance.now() + 1_100;
    while (performance.now() < busyUntil) {
      // Synchronous work: the loop is active the whole time.
    }
    expect(loop.saturated()).toBe(true);
    await sleep(1_100);
    expect(loop.saturated()).toBe(false);
  });
});
