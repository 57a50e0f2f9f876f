// One autocannon measurement (warm-up discarded, then the measured run) and its row: throughput,
// latency, errors, load average, CPU of every watched process and server-side CPU per request.
import autocannon from 'autocannon';
import { cpuMeter, serverSideCores } from '../lib/cpu.mjs';
import { load, sampleLoad } from '../lib/load.mjs';
import { log } from '../lib/log.mjs';
import { round } from '../lib/numbers.mjs';
import { settings } from '../lib/settings.mjs';

function runAutocannon(options) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: settings.connections, pipelining: 1, timeout: 10, ...options }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

/** Warm-up (discarded), then the measured run. */
export async function measure(label, options) {
  if (settings.warmupS > 0) await runAutocannon({ ...options, duration: settings.warmupS });
  const load1 = sampleLoad(`${label} start`).loadavg;
  const cpu = cpuMeter();
  const result = await runAutocannon({ ...options, duration: settings.durationS });
  const cpuCores = cpu();
  const row = {
    label,
    requestsPerSecond: round(result.requests.average, 0),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    bytesPerSecond: round(result.throughput.average, 0),
    loadavgAtStart: load1,
    loadavgAtEnd: load(),
    cpuCores,
    // CPU milliseconds the server side spent per request (the services or the ceiling; not the load
    // generator, the receiver, Postgres or Kafka): a contention-independent cost, comparable between the two.
    serverCpuMsPerRequest: round((serverSideCores(cpuCores) * 1000) / Math.max(1, result.requests.average), 3),
  };
  log(
    `  ${label}: ${row.requestsPerSecond} req/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, non-2xx ${row.non2xx}, errors ${row.errors}, timeouts ${row.timeouts}; CPU (cores) ${JSON.stringify(cpuCores)}; load ${row.loadavgAtEnd[0]}`,
  );
  return row;
}
