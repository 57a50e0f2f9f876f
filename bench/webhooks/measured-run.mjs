// One webhook run, start to figures: tap task-events, send the changes, wait for every delivery,
// then compute the figures. The sustained, warm-up and burst runs are all this with other settings.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuMeter } from '../lib/cpu.mjs';
import { tapTaskEvents } from '../lib/kafka.mjs';
import { sampleLoad } from '../lib/load.mjs';
import { counterTotal } from '../lib/service-counters.mjs';
import { log } from '../lib/log.mjs';
import { statementStats } from '../lib/pg-statements.mjs';
import { changeSender, sendAtConcurrency, sendAtRate } from './changes.mjs';
import { trackDeliveries } from './deliveries.mjs';
import { logRunFigures, runFigures } from './figures.mjs';
import { stallWebhooks } from './stall.mjs';

/** Waits (at most 60 s) until every acknowledged change reached every endpoint, logging progress every 5 s. */
async function waitForDeliveries(tracker, { label, expected, leadInExpected }) {
  const waitDeadline = performance.now() + 60_000;
  let lastLog = performance.now();
  while ((tracker.measured.firstDelivery.size < expected || tracker.leadIn.deliveries.size < leadInExpected) && performance.now() < waitDeadline) {
    if (performance.now() - lastLog >= 5_000) {
      lastLog = performance.now();
      log(`  ${label}: ${tracker.measured.firstDelivery.size}/${expected} deliveries`);
    }
    await sleep(100);
  }
  await sleep(1_000); // late duplicates
}

/** The measurement of the measured part: started by `start()`, read by `stop()`. */
async function runMeters(stack, { tracker, stallMs }) {
  // The load generator's own loop: a busy loop here stamps acknowledgements late (the receiver has its own thread).
  const benchLoopDelay = monitorEventLoopDelay({ resolution: 5 });
  const statements = await statementStats(stack.infra.databaseUrl);
  // Deliveries the replicas parked in their endpoints' backlogs (Postgres) instead of holding them.
  const parked = () => counterTotal(stack, 'webhooks', 'webhook_deliveries_parked_total');
  let cpu;
  let parkedBefore = Promise.resolve(null);
  return {
    start() {
      parkedBefore = parked(); // read while the run goes on: a counter, a few milliseconds late at most
      benchLoopDelay.enable();
      statements.reset();
      cpu = cpuMeter();
      tracker.measured.started = performance.now();
      if (stallMs > 0) stallWebhooks(stack, stallMs);
    },
    async stop() {
      const cpuCores = cpu();
      const topStatements = await statements.collect();
      const [before, after] = [await parkedBefore, await parked()];
      benchLoopDelay.disable();
      const parkedDeliveries = before === null || after === null ? null : after - before;
      return { cpuCores, topStatements, benchLoopDelay, parkedDeliveries };
    },
  };
}

/**
 * Sends `count` measured PATCHes (at `rate`/s, or as fast as `concurrency` allows) and tracks every
 * delivery. With `leadIn`, that many changes go first at the same rate, unmeasured except for loss:
 * the measured changes then follow a pipeline already at that rate, not the step from idle to it.
 * `context`: { stack, receiver, kafka, call, taskIds } (see ./index.mjs).
 */
export async function measuredRun(context, { label, count, rate, concurrency, endpoints, leadIn = 0, stallMs = 0 }) {
  const { stack, receiver, kafka, call, taskIds } = context;
  const marker = `${label}-${Date.now().toString(36)}`;
  const tracker = trackDeliveries({ marker, count, leadIn });
  receiver.state.onDelivery = tracker.onDelivery;
  const sender = changeSender({ call, taskIds, tracker, label });
  const tap = await tapTaskEvents(kafka, { groupId: `bench-tap-${marker}`, marker: tracker.measured.prefix, count });
  sampleLoad(`webhooks ${label} start`);
  const meters = await runMeters(stack, { tracker, stallMs });
  const startMeasuring = () => meters.start();
  const maxInFlight = rate
    ? await sendAtRate({ sender, tracker, label, rate, count, leadIn, startMeasuring })
    : await sendAtConcurrency({ sender, count, concurrency, startMeasuring });
  const sendSeconds = (performance.now() - tracker.measured.started) / 1000;
  const acked = tracker.measured.ackAt.filter((value) => value !== null).length;
  const leadInAcked = tracker.leadIn.ackAt.filter((value) => value !== null).length;
  const counts = { acked, expected: acked * endpoints, leadInAcked, leadInExpected: leadInAcked * endpoints };
  log(`  ${label}: ${acked} changes acknowledged in ${sendSeconds.toFixed(1)} s (${sender.failures.measured} failed); waiting for ${counts.expected} deliveries`);
  await waitForDeliveries(tracker, { label, expected: counts.expected, leadInExpected: counts.leadInExpected });
  const measurements = await meters.stop();
  await tap.stop();
  sampleLoad(`webhooks ${label} end`);
  receiver.state.onDelivery = null;
  const run = { label, count, rate, concurrency, endpoints, leadIn, stallMs };
  const result = runFigures({ run, tracker, failures: sender.failures, counts, sendSeconds, maxInFlight, inKafkaAt: tap.inKafkaAt, ...measurements });
  logRunFigures(result);
  return result;
}
