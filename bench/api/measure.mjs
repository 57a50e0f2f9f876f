// One endpoint against its ceiling: each side warmed up (discarded), then measured in alternating
// slices (ceiling, gateway, ceiling, gateway, …) so both see the host at the same moments; one row
// per side: throughput, latency, errors, load average, CPU of every watched process and server-side
// CPU per request.
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { cpuMeter, serverSideCores } from '../lib/cpu.mjs';
import { load, sampleLoad } from '../lib/load.mjs';
import { log } from '../lib/log.mjs';
import { round } from '../lib/numbers.mjs';
import { settings } from '../lib/settings.mjs';

const baseOptions = () => ({ connections: settings.connections, pipelining: 1, timeout: 10 });

function runAutocannon(options) {
  return new Promise((resolve, reject) => {
    autocannon({ ...baseOptions(), ...options }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** Seconds of each measured slice: BENCH_DURATION_S split over BENCH_ROUNDS, whole seconds (autocannon samples per second). */
export const sliceSeconds = () => Math.max(1, Math.round(settings.durationS / settings.rounds));

/** One side's slices, summed: requests, time, errors, CPU (core-seconds per process), raw results for the latency histogram. */
function newSide() {
  return { results: [], seconds: 0, requests: 0, bytes: 0, non2xx: 0, errors: 0, timeouts: 0, coreSeconds: {}, loadavgAtStart: null };
}

async function measureSlice(side, label, options) {
  if (side.loadavgAtStart === null) side.loadavgAtStart = sampleLoad(`${label} start`).loadavg;
  const cpu = cpuMeter();
  const started = performance.now();
  const result = await runAutocannon({ ...options, duration: sliceSeconds(), skipAggregateResult: true });
  const seconds = (performance.now() - started) / 1000;
  const cores = cpu();
  side.results.push(result);
  side.seconds += seconds;
  side.requests += result.totalCompletedRequests;
  side.bytes += result.totalBytes;
  side.non2xx += result.non2xx;
  side.errors += result.errors;
  side.timeouts += result.timeouts;
  for (const [name, value] of Object.entries(cores)) {
    side.coreSeconds[name] = value === null || side.coreSeconds[name] === null ? null : (side.coreSeconds[name] ?? 0) + value * seconds;
  }
}

/** The row of one side, its slices taken together (latency percentiles from their merged histograms). */
function rowOf(side, label, options) {
  const { latency } = autocannon.aggregateResult(side.results, { ...baseOptions(), url: options.url });
  const cpuCores = Object.fromEntries(Object.entries(side.coreSeconds).map(([name, value]) => [name, value === null ? null : round(value / side.seconds, 2)]));
  const requestsPerSecond = side.requests / side.seconds;
  const row = {
    label,
    requestsPerSecond: round(requestsPerSecond, 0),
    p50Ms: latency.p50,
    p99Ms: latency.p99,
    maxMs: latency.max,
    requests: side.requests,
    non2xx: side.non2xx,
    errors: side.errors,
    timeouts: side.timeouts,
    bytesPerSecond: round(side.bytes / side.seconds, 0),
    slices: side.results.length,
    measuredSeconds: round(side.seconds, 1),
    loadavgAtStart: side.loadavgAtStart,
    loadavgAtEnd: load(),
    cpuCores,
    // CPU milliseconds the server side spent per request (the services or the ceiling; not the load
    // generator, the receiver, Postgres or Kafka): a contention-independent cost, comparable between the two.
    serverCpuMsPerRequest: round((serverSideCores(cpuCores) * 1000) / Math.max(1, requestsPerSecond), 3),
  };
  log(
    `  ${label}: ${row.requestsPerSecond} req/s over ${row.slices} slices (${row.measuredSeconds} s), p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, non-2xx ${row.non2xx}, errors ${row.errors}, timeouts ${row.timeouts}; CPU (cores) ${JSON.stringify(cpuCores)}; load ${row.loadavgAtEnd[0]}`,
  );
  return row;
}

/**
 * The ceiling and the gateway, each warmed up once, then BENCH_ROUNDS alternating slices of each.
 * `settle()` runs before the first run and after every gateway run (writes: wait until the event
 * pipeline has drained, so one run's backlog does not spill into the next; a ceiling run leaves none);
 * `afterWarmUp()` once the warm-ups are done (Postgres's statement statistics start there).
 */
export async function measureAgainstCeiling(name, { ceiling, service }, { settle = async () => undefined, afterWarmUp = async () => undefined } = {}) {
  const ceilingLabel = `ceiling for ${name}`;
  await settle();
  if (settings.warmupS > 0) {
    await runAutocannon({ ...ceiling, duration: settings.warmupS });
    await runAutocannon({ ...service, duration: settings.warmupS });
    await settle();
  }
  await afterWarmUp();
  const sides = { ceiling: newSide(), service: newSide() };
  for (let round = 0; round < settings.rounds; round++) {
    await measureSlice(sides.ceiling, ceilingLabel, ceiling);
    await measureSlice(sides.service, name, service);
    await settle();
  }
  return { ceilingRow: rowOf(sides.ceiling, ceilingLabel, ceiling), serviceRow: rowOf(sides.service, name, service) };
}
