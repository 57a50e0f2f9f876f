// `npm run bench`: starts the whole stack on loopback (like `npm start`), measures the API against a
// bare-fastify ceiling in the same run, then the webhook pipeline, then the app's pages, then each service's RSS; prints a
// table and writes bench/results/<timestamp>.json and bench/results/latest.json.
// What each part measures lives beside it: api/ (one module per endpoint, the ceiling), webhooks/
// (sustained, burst, stall), lib/ (stack, receiver, Kafka, CPU and RSS sampling, report).
//
// Environment knobs (all optional; read in lib/settings.mjs):
//   BENCH_ONLY=api|webhooks|web run one part only (web: the app's pages, bench/web/)
//   BENCH_DURATION_S=10         measured seconds per API endpoint and side (after BENCH_WARMUP_S=3 of warm-up),
//                               in BENCH_ROUNDS=5 slices that alternate ceiling and gateway
//   BENCH_CONNECTIONS=50        autocannon connections
//   BENCH_WEBHOOK_RATE=500      task changes/s of the sustained webhook run, for BENCH_WEBHOOK_SECONDS=20
//                               (after a BENCH_WEBHOOK_WARMUP_S=20 s warm-up at that rate and, without a
//                               pause, a BENCH_WEBHOOK_LEAD_IN_S=5 s lead-in: neither is measured)
//   BENCH_WEBHOOK_STALL_MS=0    freeze the webhooks service (SIGSTOP) this long as the sustained run's measured
//                               part begins: does the pipeline work off a backlog while the load goes on?
//   BENCH_WEBHOOK_ENDPOINTS=4   endpoints subscribed in the webhook workspace (deliveries = changes × endpoints)
//   BENCH_BURST_CHANGES=3000    task changes of the burst run (BENCH_BURST_ENDPOINTS=8)
//   BENCH_WEBHOOK_REPLICAS=2    webhooks service replicas for the webhook runs (as the Helm chart deploys it)
//   BENCH_LOG_LEVEL             LOG_LEVEL of the services (default: their default, info)
//   BENCH_NODE_OPTIONS          added to the services' NODE_OPTIONS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
//   BENCH_EXTRA_ENV=K=V,K=V     extra environment of the services (experiments with their settings)
//   BENCH_ENDPOINTS=<regex>     API endpoints to measure (by name, e.g. "GET /v1/projects"); default all
//   BENCH_WEB_REQUESTS=200      requests per app page and mode (one after the other, then at BENCH_WEB_CONCURRENCY=4),
//                               after BENCH_WEB_WARMUP=20 not measured; BENCH_WEB_PAGES=<regex> picks pages by name
//   BENCH_TRACING=1             traces on: the services export to a local OTLP receiver (lib/otlp-sink.mjs), default sampling
//   BENCH_MAX_LOAD=1.5          wait (up to BENCH_LOAD_WAIT_S=120 s) for the 1-min load average to drop below it
// `node bench/run.mjs --dry-run` loads every module, prints the settings and stops (starts nothing).
import os from 'node:os';
import { benchApi } from './api/index.mjs';
import { cleanup, trapSignals } from './lib/cleanup.mjs';
import { probeHostSpeed } from './lib/host-speed.mjs';
import { startOtlpSink } from './lib/otlp-sink.mjs';
import { loadSamples, sampleLoad, waitForQuietMachine } from './lib/load.mjs';
import { log, t0 } from './lib/log.mjs';
import { startReceiverSide } from './lib/receiver.mjs';
import { report, writeResults } from './lib/report.mjs';
import { rssRows, rssSnapshot } from './lib/rss.mjs';
import { servicesExtraEnv, settings, targets } from './lib/settings.mjs';
import { startBenchStack } from './lib/stack.mjs';
import { benchWeb } from './web/index.mjs';
import { benchWebhooks } from './webhooks/index.mjs';

async function main() {
  await waitForQuietMachine();
  sampleLoad('start');
  const hostProbeMsAtStart = probeHostSpeed();
  log(`host probe ${hostProbeMsAtStart} ms (lower is faster)`);
  const receiverSide = await startReceiverSide();
  const otlpSink = settings.tracing ? await startOtlpSink() : null;
  const stack = await startBenchStack(receiverSide, otlpSink?.endpoint);
  const rssAtStart = rssSnapshot(stack);

  const results = {
    startedAt: new Date(t0).toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, totalMemMb: Math.round(os.totalmem() / 2 ** 20), node: process.version },
    settings,
    hostProbeMsAtStart,
    servicesExtraEnv,
    targets,
  };
  const runs = (part) => settings.only === 'all' || settings.only === part;
  if (runs('api')) results.api = await benchApi(stack);
  if (runs('webhooks')) results.webhooks = await benchWebhooks(stack, receiverSide.receiver);
  if (runs('web')) results.web = await benchWeb(stack, receiverSide.receiver);
  if (otlpSink) {
    results.tracing = { endpoint: otlpSink.endpoint, ...(await otlpSink.stats()) };
    log(`traces: ${JSON.stringify(results.tracing)}`);
  }
  results.rss = await rssRows(stack, rssAtStart);
  if (results.api) results.rss.push({ name: 'ceiling (bare fastify, for reference)', pid: '-', rssMb: results.api.ceilingRssMb });
  sampleLoad('end');
  results.loadSamples = loadSamples;
  results.finishedAt = new Date().toISOString();
  results.logDir = stack.logDir;

  process.stdout.write(`\n${report(results)}\n`);
  writeResults(results);
}

log(`settings ${JSON.stringify(settings)}`);
if (!process.argv.includes('--dry-run')) {
  trapSignals();
  try {
    await main();
  } catch (error) {
    log(`failed: ${error.stack ?? error}`);
    process.exitCode = 1;
  } finally {
    log('stopping the stack');
    await cleanup();
  }
}
