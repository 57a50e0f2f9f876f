// The machine's load average: waited on before measuring, and recorded at every step (`loadSamples`).
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { log } from './log.mjs';
import { settings } from './settings.mjs';

export const load = () => os.loadavg().map((value) => Number(value.toFixed(2)));

/** Every sample taken in this run, in order (written to the results as `loadSamples`). */
export const loadSamples = [];

export function sampleLoad(phase) {
  const sample = { phase, at: new Date().toISOString(), loadavg: load() };
  loadSamples.push(sample);
  return sample;
}

/** Waits (up to BENCH_LOAD_WAIT_S) for the 1-minute load average to drop below BENCH_MAX_LOAD. */
export async function waitForQuietMachine() {
  const deadline = Date.now() + settings.loadWaitS * 1000;
  let [one] = os.loadavg();
  while (one >= settings.maxLoad && Date.now() < deadline) {
    log(`load average ${load().join(' ')} ≥ ${settings.maxLoad}: waiting for a quieter machine`);
    await sleep(10_000);
    [one] = os.loadavg();
  }
  log(`load average ${load().join(' ')}${one >= settings.maxLoad ? ' (still high: measuring anyway)' : ''}`);
}
