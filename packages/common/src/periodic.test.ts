import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { PeriodicJob } from './periodic.js';

const logger = pino({ level: 'silent' });

describe('PeriodicJob', () => {
  it('runs after the first delay, then every interval, never two runs at once', async () => {
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const job = new PeriodicJob({
      name: 'test job',
      intervalMs: 5,
      firstRunAfterMs: 1,
      logger,
      run: async () => {
        active += 1;
        maxActive = Math.max(maxActive, active);
        await sleep(15);
        runs += 1;
        active -= 1;
      },
    });
    job.start();
    await sleep(120);
    await job.stop();
    expect(runs).toBeGreaterThanOrEqual(3);
    expect(maxActive).toBe(1);
  });

  it('a failed run is logged and the next one still comes', async () => {
    let calls = 0;
    const job = new PeriodicJob({
      name: 'failing job',
      intervalMs: 5,
      logger,
      run: async () => {
        calls += 1;
        throw new Error('boom');
      },
    });
    job.start();
    await sleep(60);
    await job.stop();
    expect(calls).toBeGreaterThanOrEqual(2);
  });

  it('stop waits for the run in progress and nothing runs after it', async () => {
    let finished = false;
    let calls = 0;
    const job = new PeriodicJob({
      name: 'slow job',
      intervalMs: 1,
      logger,
      run: async () => {
        calls += 1;
        await sleep(40);
        finished = true;
      },
    });
    job.start();
    await sleep(10);
    await job.stop();
    expect(finished).toBe(true);
    const after = calls;
    await sleep(30);
    expect(calls).toBe(after);
  });

  it('an interval of 0 never runs', async () => {
    let calls = 0;
    const job = new PeriodicJob({ name: 'off', intervalMs: 0, logger, run: async () => void (calls += 1) });
    job.start();
    await sleep(20);
    await job.stop();
    expect(calls).toBe(0);
  });
});
