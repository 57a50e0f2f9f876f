// Every environment knob of `npm run bench`, read once (the only reader of process.env in bench/).
// `settings` and `targets` are written into each result file as they are: keep their keys stable so
// results stay comparable. The knobs and their meaning are listed in bench/run.mjs and bench/README.md.
const env = process.env;
const num = (name, fallback) => (env[name] !== undefined && env[name] !== '' ? Number(env[name]) : fallback);

export const settings = {
  only: env.BENCH_ONLY ?? 'all',
  durationS: num('BENCH_DURATION_S', 10),
  // The measured seconds of each API row are split into this many alternating ceiling/gateway slices.
  rounds: num('BENCH_ROUNDS', 5),
  warmupS: num('BENCH_WARMUP_S', 3),
  connections: num('BENCH_CONNECTIONS', 50),
  listSize: 300,
  webhookRate: num('BENCH_WEBHOOK_RATE', 500),
  webhookSeconds: num('BENCH_WEBHOOK_SECONDS', 20),
  webhookEndpoints: num('BENCH_WEBHOOK_ENDPOINTS', 4),
  webhookTasks: 200,
  burstChanges: num('BENCH_BURST_CHANGES', 3000),
  burstEndpoints: num('BENCH_BURST_ENDPOINTS', 8),
  webhookReplicas: num('BENCH_WEBHOOK_REPLICAS', 2),
  webhookWarmupS: num('BENCH_WEBHOOK_WARMUP_S', 20),
  webhookLeadInS: num('BENCH_WEBHOOK_LEAD_IN_S', 5),
  webhookStallMs: num('BENCH_WEBHOOK_STALL_MS', 0),
  webRequests: num('BENCH_WEB_REQUESTS', 200),
  webWarmup: num('BENCH_WEB_WARMUP', 20),
  webConcurrency: num('BENCH_WEB_CONCURRENCY', 4),
  maxLoad: num('BENCH_MAX_LOAD', 1.5),
  loadWaitS: num('BENCH_LOAD_WAIT_S', 120),
  // BENCH_TRACING=1: traces on (OTLP to a local receiver, the services' default sampling; lib/otlp-sink.mjs).
  tracing: env.BENCH_TRACING === '1',
};

if (!Number.isInteger(settings.rounds) || settings.rounds < 1) throw new Error(`BENCH_ROUNDS must be a whole number ≥ 1, got ${settings.rounds}`);
if (!['all', 'api', 'webhooks', 'web'].includes(settings.only)) throw new Error(`BENCH_ONLY must be api, webhooks or web, got ${settings.only}`);

export const targets = {
  getTaskRatio: 0.15,
  getTaskP99Ms: 25,
  listRatio: 0.15,
  writeRatio: 0.06,
  deliveriesPerSecond: 2000,
  deliveryP99Ms: 250,
  rssMb: 200,
  webServerP95Ms: 100,
};

/** API endpoints to measure (regex on their names, BENCH_ENDPOINTS), or null for all. */
export const endpointFilter = env.BENCH_ENDPOINTS ? new RegExp(env.BENCH_ENDPOINTS) : null;

/** App pages to measure (regex on their names, BENCH_WEB_PAGES), or null for all. */
export const webPageFilter = env.BENCH_WEB_PAGES ? new RegExp(env.BENCH_WEB_PAGES) : null;

/** The knobs that change the services' own environment, as recorded in the results (`servicesExtraEnv`). */
export const servicesExtraEnv = {
  BENCH_EXTRA_ENV: env.BENCH_EXTRA_ENV ?? null,
  BENCH_NODE_OPTIONS: env.BENCH_NODE_OPTIONS ?? null,
  BENCH_LOG_LEVEL: env.BENCH_LOG_LEVEL ?? null,
};

/** BENCH_EXTRA_ENV="K=V,K=V" as an object (experiments with the services' settings). */
export function extraEnvPairs() {
  return Object.fromEntries(
    (env.BENCH_EXTRA_ENV ?? '')
      .split(',')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim()]),
  );
}
