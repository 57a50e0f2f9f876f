// `npm run bench`: starts the whole stack on loopback (like `npm start`), measures the API against a
// bare-fastify ceiling in the same run, then the webhook pipeline, then each service's RSS; prints a
// table and writes bench/results/<timestamp>.json and bench/results/latest.json.
//
// Environment knobs (all optional):
//   BENCH_ONLY=api|webhooks     run one half only
//   BENCH_DURATION_S=10         measured seconds per API endpoint (after BENCH_WARMUP_S=3 of warm-up)
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
//   BENCH_MAX_LOAD=1.5          wait (up to BENCH_LOAD_WAIT_S=120 s) for the 1-min load average to drop below it
import { spawn, execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { Pool } from 'undici';
import { statementStats } from './lib/pg-statements.mjs';
import { probeHostSpeed } from './lib/host-speed.mjs';
import { cacheDir, createTestPki, repoRoot, runCommand, serviceMemoryEnv, startStack, startTestDnsServer } from '@tws/devstack';

const here = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;
const num = (name, fallback) => (env[name] !== undefined && env[name] !== '' ? Number(env[name]) : fallback);
const settings = {
  only: env.BENCH_ONLY ?? 'all',
  durationS: num('BENCH_DURATION_S', 10),
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
  maxLoad: num('BENCH_MAX_LOAD', 1.5),
  loadWaitS: num('BENCH_LOAD_WAIT_S', 120),
};
const targets = {
  getTaskRatio: 0.15,
  getTaskP99Ms: 25,
  listRatio: 0.15,
  writeRatio: 0.06,
  deliveriesPerSecond: 2000,
  deliveryP99Ms: 250,
  rssMb: 200,
};

const t0 = Date.now();
const log = (message) => process.stderr.write(`[bench +${((Date.now() - t0) / 1000).toFixed(1)}s] ${message}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () => os.loadavg().map((value) => Number(value.toFixed(2)));
const loadSamples = [];
const sampleLoad = (phase) => {
  const sample = { phase, at: new Date().toISOString(), loadavg: load() };
  loadSamples.push(sample);
  return sample;
};
const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : null);
const round = (value, digits = 2) => (value === null || value === undefined ? null : Number(value.toFixed(digits)));

const cleanups = [];
async function cleanup() {
  while (cleanups.length) {
    const step = cleanups.pop();
    try {
      await step();
    } catch (error) {
      log(`clean-up step failed: ${error.message}`);
    }
  }
}
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping everything`);
    void cleanup().then(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------- helpers

async function waitForQuietMachine() {
  const deadline = Date.now() + settings.loadWaitS * 1000;
  let [one] = os.loadavg();
  while (one >= settings.maxLoad && Date.now() < deadline) {
    log(`load average ${load().join(' ')} ≥ ${settings.maxLoad}: waiting for a quieter machine`);
    await sleep(10_000);
    [one] = os.loadavg();
  }
  log(`load average ${load().join(' ')}${one >= settings.maxLoad ? ' (still high: measuring anyway)' : ''}`);
}

function rssMbOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1]);
    return round(kb / 1024, 1);
  } catch {
    return null;
  }
}

/**
 * Processes whose CPU time each measurement reports (filled once the stack is up). `serverSide`:
 * the services and the ceiling, whose CPU per request is compared; not the load generator or the receiver.
 */
const watched = [];

/** One read of /proc/<pid>/stat: command, parent, and CPU seconds of the process and of its reaped children. */
function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    return {
      command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      parent: Number(fields[1]),
      // utime + stime, cutime + cstime, in clock ticks (USER_HZ = 100)
      ownSeconds: (Number(fields[11]) + Number(fields[12])) / 100,
      childrenSeconds: (Number(fields[13]) + Number(fields[14])) / 100,
    };
  } catch {
    return null; // exited
  }
}

/** The servers the launcher started, by command name, and the row each one gets in `cpuCores`. */
const infraRows = { postgres: 'postgres (all backends)', java: 'kafka (broker JVM)', minio: 'minio' };

/**
 * Infrastructure CPU in seconds: every descendant process of a server, summed. PostgreSQL's
 * postmaster also counts the backends it reaped (cutime), so connections that closed during the
 * measurement are not lost.
 */
function infraCpuSeconds() {
  const stats = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(entry);
    if (stat) stats.set(Number(entry), stat);
  }
  const isDescendant = (pid) => {
    for (let current = stats.get(pid)?.parent; current; current = stats.get(current)?.parent) if (current === process.pid) return true;
    return false;
  };
  const totals = Object.fromEntries(Object.values(infraRows).map((row) => [row, 0]));
  for (const [pid, stat] of stats) {
    const row = infraRows[stat.command];
    if (!row || !isDescendant(pid)) continue;
    const isPostmaster = stat.command === 'postgres' && stats.get(stat.parent)?.command !== 'postgres';
    totals[row] += stat.ownSeconds + (isPostmaster ? stat.childrenSeconds : 0);
  }
  return totals;
}

/** Starts CPU accounting; the returned function gives each watched process's CPU use (in cores) since. */
function cpuMeter() {
  const start = performance.now();
  const before = watched.map(({ pid }) => procStat(pid)?.ownSeconds ?? null);
  const infraBefore = infraCpuSeconds();
  return () => {
    const seconds = (performance.now() - start) / 1000;
    const infraNow = infraCpuSeconds();
    return {
      ...Object.fromEntries(
        watched.map(({ name, pid }, i) => {
          const now = procStat(pid)?.ownSeconds ?? null;
          return [name, now === null || before[i] === null ? null : round((now - before[i]) / seconds, 2)];
        }),
      ),
      ...Object.fromEntries(Object.entries(infraNow).map(([name, now]) => [name, round((now - infraBefore[name]) / seconds, 2)])),
    };
  };
}

async function adminCli(stack, args) {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot, 'packages/admin-cli/dist/cli.js'), ...args], {
    env: {
      ...process.env,
      TASKS_GRPC_TARGET: `127.0.0.1:${stack.services.instances.find((instance) => instance.name === 'tasks').grpcPort}`,
      DEV_JWT_PRIVATE_KEY_FILE: stack.devJwt.privateKeyFile,
      LOG_LEVEL: 'silent',
    },
  });
  return JSON.parse(stdout);
}

function apiClient(gatewayUrl, key, connections = 16) {
  const pool = new Pool(gatewayUrl, { connections, pipelining: 1 });
  cleanups.push(() => pool.close());
  async function call(method, urlPath, body) {
    const response = await pool.request({
      method,
      path: urlPath,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new Error(`${method} ${urlPath} answered ${response.statusCode}: ${text}`);
    return {
      status: response.statusCode,
      text,
      // Parsed when asked for: the webhook runs send hundreds of PATCHes a second and need the status only.
      get json() {
        return text ? JSON.parse(text) : null;
      },
    };
  }
  return { call, pool };
}

/** Runs `fn(i)` for i in 0..count-1 with at most `concurrency` at once. */
async function inParallel(count, concurrency, fn) {
  const results = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await fn(i);
      }
    }),
  );
  return results;
}

function runAutocannon(options) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: settings.connections, pipelining: 1, timeout: 10, ...options }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

/** Warm-up (discarded), then the measured run. */
async function measure(label, options) {
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
    serverCpuMsPerRequest: round(
      (Object.entries(cpuCores)
        .filter(([name]) => watched.some((entry) => entry.serverSide && entry.name === name))
        .reduce((sum, [, cores]) => sum + (cores ?? 0), 0) *
        1000) /
        Math.max(1, result.requests.average),
      3,
    ),
  };
  log(
    `  ${label}: ${row.requestsPerSecond} req/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, non-2xx ${row.non2xx}, errors ${row.errors}, timeouts ${row.timeouts}; CPU (cores) ${JSON.stringify(cpuCores)}; load ${row.loadavgAtEnd[0]}`,
  );
  return row;
}

async function startCeiling(bodies) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tws-bench-ceiling-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'bodies.json');
  writeFileSync(file, JSON.stringify(bodies));
  const child = spawn(process.execPath, [path.join(here, 'lib/ceiling-server.mjs'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
  const port = await new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      const line = buffer.split('\n')[0];
      if (buffer.includes('\n')) resolve(JSON.parse(line).port);
    });
    child.once('exit', (code) => reject(new Error(`ceiling server exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid };
}

// ---------------------------------------------------------------------------------------------- receiver

const receiverAddress = '127.0.10.1';
const domain = 'bench.test';

/** Builds the receiver (`receiver/main.go`, standard library only) into the cache, once per version of its source. */
async function receiverBinary() {
  const sourceDir = path.join(here, 'receiver');
  const digest = createHash('sha256');
  for (const file of ['go.mod', 'main.go']) digest.update(readFileSync(path.join(sourceDir, file)));
  const binary = path.join(cacheDir, 'bench-receiver', digest.digest('hex').slice(0, 16), 'receiver');
  if (!existsSync(binary)) {
    log('building the webhook receiver (go build, first run only)');
    await runCommand('go', ['build', '-o', binary, '.'], {
      cwd: sourceDir,
      what: 'building bench/receiver with go build (needs go on PATH, as MinIO does)',
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
    });
  }
  return binary;
}

/**
 * HTTPS receiver on loopback, a Go process (`receiver/main.go`): it checks each signature and
 * reports (endpoint host, delivery id, task name, time received) to `state.onDelivery`. Kept out of
 * this process so receiving does not wait for the load generator's event loop, and cheap, because
 * in production the receiver is the customer's server and not part of what is measured.
 */
async function startReceiver(pki) {
  const state = { onDelivery: null, total: 0, badSignatures: 0, unparsable: 0 };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tws-bench-receiver-'));
  writeFileSync(path.join(dir, 'cert.pem'), pki.serverCertPem);
  writeFileSync(path.join(dir, 'key.pem'), pki.serverKeyPem, { mode: 0o600 });
  const child = spawn(
    await receiverBinary(),
    ['-address', receiverAddress, '-cert', path.join(dir, 'cert.pem'), '-key', path.join(dir, 'key.pem')],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const acknowledged = new Map();
  let listening;
  const port = new Promise((resolve, reject) => {
    listening = resolve;
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the receiver exited (${code}) before listening`)));
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    const fields = line.split('\t');
    if (fields[0] === 'D') {
      const [, host, deliveryId, receivedAtMicros, name, signatureOk, parsed] = fields;
      state.total += 1;
      if (signatureOk !== '1') state.badSignatures += 1;
      if (parsed !== '1') state.unparsable += 1;
      // On this process's clock, like the PATCH acknowledgements it is compared with.
      state.onDelivery?.({ host, deliveryId, name, receivedAt: Number(receivedAtMicros) / 1000 - performance.timeOrigin });
    } else if (fields[0] === 'A') {
      acknowledged.get(fields[1])?.();
    } else if (fields[0] === 'L') {
      listening(Number(fields[1]));
    }
  });
  cleanups.push(async () => {
    child.stdin.end();
    await Promise.race([new Promise((resolve) => child.once('exit', resolve)), sleep(5_000)]);
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const addSecret = (host, secret) =>
    new Promise((resolve) => {
      acknowledged.set(host, resolve);
      child.stdin.write(`S\t${host}\t${secret}\n`);
    });
  return { port: await port, state, addSecret, pid: child.pid };
}

// ---------------------------------------------------------------------------------------------- drain

async function waitForPipelineIdle(stack, what, timeoutMs = 120_000) {
  const db = new pg.Client({ connectionString: stack.infra.databaseUrl });
  await db.connect();
  const kafka = new Kafka({ clientId: 'bench', brokers: stack.infra.kafkaBrokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const { rows } = await db.query('SELECT count(*)::int AS n FROM tasks.outbox WHERE published_at IS NULL AND rejected_at IS NULL');
      const ends = await admin.fetchTopicOffsets('task-events.v1');
      const committed = await admin.fetchOffsets({ groupId: 'webhooks.deliveries', topics: ['task-events.v1'] }).catch(() => []);
      const done = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
      const lag = ends.reduce((sum, p) => sum + Math.max(0, Number(p.high) - Math.max(0, done.get(p.partition) ?? 0)), 0);
      if (rows[0].n === 0 && lag === 0) {
        log(`${what}: outbox empty, webhooks consumer caught up`);
        return;
      }
      if (Date.now() > deadline) {
        log(`${what}: still ${rows[0].n} unpublished outbox rows, consumer lag ${lag} after ${timeoutMs / 1000} s; going on`);
        return;
      }
      log(`${what}: waiting (outbox ${rows[0].n} unpublished, webhooks consumer lag ${lag})`);
      await sleep(2_000);
    }
  } finally {
    await admin.disconnect();
    await db.end();
  }
}

// ---------------------------------------------------------------------------------------------- API

async function benchApi(stack) {
  const gatewayUrl = stack.services.gatewayUrl;
  log('API: creating a pro workspace');
  const created = await adminCli(stack, ['workspace', 'create', '--name', 'Bench API', '--plan', 'pro']);
  const key = created.apiKey.key;
  const { call } = apiClient(gatewayUrl, key);
  const listProject = (await call('POST', '/v1/projects', { name: 'Bench list', description: '300 tasks' })).json;
  const postProject = (await call('POST', '/v1/projects', { name: 'Bench writes' })).json;
  log(`API: creating ${settings.listSize} tasks`);
  const taskIds = await inParallel(settings.listSize, 16, async (i) => {
    const body = { projectId: listProject.id, listId: listProject.defaultListId, name: `Bench task ${i + 1}: write the quarterly report` };
    const id = (await call('POST', '/v1/tasks', body)).json.id;
    // Every third task gets a markdown description (a rich-text node array in responses).
    if (i % 3 === 0) await call('PATCH', `/v1/tasks/${id}`, { description: `## Notes ${i}\n- **why** it matters\n- *when*: this week` });
    return id;
  });
  const single = (await call('GET', `/v1/tasks/${taskIds[0]}`)).text;
  const list = (await call('GET', `/v1/projects/${listProject.id}/tasks`)).text;
  const listLength = JSON.parse(list).length;
  if (listLength !== settings.listSize) throw new Error(`list answered ${listLength} tasks, expected ${settings.listSize}`);
  log(`API: single task ${Buffer.byteLength(single)} bytes, list of ${listLength} tasks ${Buffer.byteLength(list)} bytes`);
  const ceiling = await startCeiling({ single, list });
  log(`API: ceiling server (bare fastify) on ${ceiling.url}, pid ${ceiling.pid}`);
  watched.push({ name: 'ceiling', pid: ceiling.pid, serverSide: true });

  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const postBody = JSON.stringify({ projectId: postProject.id, listId: postProject.defaultListId, name: 'Bench created task: write the report' });
  let patchCounter = 0;
  const patchRequest = (prefix) => [
    {
      method: 'PATCH',
      setupRequest: (request) => {
        patchCounter += 1;
        return {
          ...request,
          path: `${prefix}/${taskIds[patchCounter % taskIds.length]}`,
          body: JSON.stringify({ name: `Bench task renamed ${patchCounter}` }),
        };
      },
    },
  ];
  const endpoints = [
    {
      name: 'GET /v1/tasks/:id',
      service: { url: `${gatewayUrl}/v1/tasks/${taskIds[0]}`, headers },
      ceiling: { url: `${ceiling.url}/single` },
      ratioTarget: targets.getTaskRatio,
      p99Target: targets.getTaskP99Ms,
    },
    {
      name: `GET /v1/projects/:id/tasks (${settings.listSize})`,
      service: { url: `${gatewayUrl}/v1/projects/${listProject.id}/tasks`, headers },
      ceiling: { url: `${ceiling.url}/list` },
      ratioTarget: targets.listRatio,
    },
    {
      name: 'POST /v1/tasks',
      service: { url: `${gatewayUrl}/v1/tasks`, method: 'POST', headers, body: postBody },
      ceiling: { url: `${ceiling.url}/echo`, method: 'POST', headers: { 'content-type': 'application/json' }, body: postBody },
      ratioTarget: targets.writeRatio,
    },
    {
      name: 'PATCH /v1/tasks/:id',
      service: { url: gatewayUrl, headers, requests: patchRequest('/v1/tasks') },
      ceiling: { url: ceiling.url, headers: { 'content-type': 'application/json' }, requests: patchRequest('/echo') },
      ratioTarget: targets.writeRatio,
    },
  ];
  const rows = [];
  const only = env.BENCH_ENDPOINTS ? new RegExp(env.BENCH_ENDPOINTS) : null;
  for (const endpoint of endpoints.filter((candidate) => !only || only.test(candidate.name))) {
    log(`API: ${endpoint.name}: ceiling (bare fastify), ${settings.warmupS} s warm-up + ${settings.durationS} s at ${settings.connections} connections`);
    const ceilingRow = await measure(`ceiling for ${endpoint.name}`, endpoint.ceiling);
    if (endpoint.name.startsWith('POST') || endpoint.name.startsWith('PATCH')) {
      // Writes make outbox rows and Kafka events: let the previous step's settle so they do not overlap.
      await waitForPipelineIdle(stack, `before ${endpoint.name}`);
    }
    log(`API: ${endpoint.name}: through the gateway`);
    const serviceRow = await measure(endpoint.name, endpoint.service);
    const ratio = serviceRow.requestsPerSecond / ceilingRow.requestsPerSecond;
    const ok =
      serviceRow.non2xx === 0 &&
      serviceRow.errors === 0 &&
      serviceRow.timeouts === 0 &&
      ratio >= endpoint.ratioTarget &&
      (endpoint.p99Target === undefined || serviceRow.p99Ms <= endpoint.p99Target);
    rows.push({
      endpoint: endpoint.name,
      // Ceiling CPU cost / stack CPU cost per request: the throughput ratio a machine with the CPU to itself would show.
      cpuCostRatio: round(ceilingRow.serverCpuMsPerRequest / serviceRow.serverCpuMsPerRequest, 3),
      service: serviceRow,
      ceiling: ceilingRow,
      ratio: round(ratio, 3),
      ratioTarget: endpoint.ratioTarget,
      p99TargetMs: endpoint.p99Target ?? null,
      met: ok,
    });
  }
  const ceilingRss = rssMbOf(ceiling.pid);
  return {
    rows,
    bodies: { singleBytes: Buffer.byteLength(single), listBytes: Buffer.byteLength(list), listTasks: listLength },
    ceilingRssMb: ceilingRss,
  };
}

// ---------------------------------------------------------------------------------------------- webhooks

async function benchWebhooks(stack, receiver) {
  const gatewayUrl = stack.services.gatewayUrl;
  log('webhooks: creating a workspace, tasks and endpoints');
  const created = await adminCli(stack, ['workspace', 'create', '--name', 'Bench webhooks', '--plan', 'pro']);
  const { call } = apiClient(gatewayUrl, created.apiKey.key, 64);
  const project = (await call('POST', '/v1/projects', { name: 'Bench webhooks' })).json;
  const taskIds = await inParallel(settings.webhookTasks, 16, async (i) =>
    (await call('POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: `Webhook task ${i}` })).json.id,
  );
  const kafka = new Kafka({ clientId: 'bench-tap', brokers: stack.infra.kafkaBrokers, logLevel: logLevel.NOTHING });
  const endpointHosts = [];
  const registerEndpoints = async (count) => {
    for (let i = 0; i < count; i += 1) {
      const host = `h${endpointHosts.length + 1}.${domain}`;
      const secret = randomBytes(24).toString('base64url');
      await receiver.addSecret(host, secret);
      await call('POST', '/v1/webhooks', { url: `https://${host}:${receiver.port}/hook`, secret, events: ['task.updated'] });
      endpointHosts.push(host);
    }
  };
  await registerEndpoints(settings.webhookEndpoints);
  await waitForPipelineIdle(stack, 'webhooks: before the runs');

  /**
   * Sends `count` measured PATCHes (at `rate`/s, or as fast as `concurrency` allows) and tracks every
   * delivery. With `leadIn`, that many changes go first at the same rate, unmeasured except for loss:
   * the measured changes then follow a pipeline already at that rate, not the step from idle to it.
   */
  async function run({ label, count, rate, concurrency, endpoints, leadIn = 0, stallMs = 0 }) {
    const marker = `${label}-${Date.now().toString(36)}`;
    const ackAt = new Array(count).fill(null);
    const firstDelivery = new Map(); // `${host} ${seq}` → receivedAt
    const deliveryIds = new Map(); // `${host} ${X-Service-Delivery}` → times received
    const latencies = [];
    // By the second (of the run) the change was acknowledged in: where a run was slow, not only how slow.
    const latenciesBySecond = [];
    let received = 0;
    let foreign = 0;
    let firstReceivedAt = null;
    let lastReceivedAt = null;
    const prefix = `${marker} #`;
    const leadInPrefix = `${marker} lead-in #`;
    const leadInDeliveries = new Set(); // `${host} ${n}`
    let leadInReceived = 0;
    const leadInAckAt = new Array(leadIn).fill(null);
    const leadInLatencies = [];
    let started = Number.POSITIVE_INFINITY; // when the first measured change was sent
    receiver.state.onDelivery = ({ host, deliveryId, name, receivedAt }) => {
      if (typeof name === 'string' && name.startsWith(leadInPrefix)) {
        const n = Number(name.slice(leadInPrefix.length));
        leadInReceived += 1;
        const id = `${host} ${n}`;
        if (!leadInDeliveries.has(id)) {
          leadInDeliveries.add(id);
          if (leadInAckAt[n] !== null) leadInLatencies.push(receivedAt - leadInAckAt[n]);
        }
        return;
      }
      if (typeof name !== 'string' || !name.startsWith(prefix)) {
        foreign += 1;
        return;
      }
      const seq = Number(name.slice(prefix.length));
      received += 1;
      firstReceivedAt ??= receivedAt;
      lastReceivedAt = receivedAt;
      // X-Service-Delivery is the event id (the same for every endpoint of the event): count per endpoint.
      const deliveryKey = `${host} ${deliveryId}`;
      deliveryIds.set(deliveryKey, (deliveryIds.get(deliveryKey) ?? 0) + 1);
      const id = `${host} ${seq}`;
      if (!firstDelivery.has(id)) {
        firstDelivery.set(id, receivedAt);
        if (ackAt[seq] !== null) {
          latencies.push(receivedAt - ackAt[seq]);
          (latenciesBySecond[Math.floor((ackAt[seq] - started) / 1000)] ??= []).push(receivedAt - ackAt[seq]);
        }
      }
    };
    const failures = { measured: 0, leadIn: 0 };
    let inFlight = 0;
    /** Renames task `n` to its marker and stamps the acknowledgement: a measured change, or one of the lead-in. */
    const patch = async (n, ofLeadIn = false) => {
      const [namePrefix, acks, kind] = ofLeadIn ? [leadInPrefix, leadInAckAt, 'leadIn'] : [prefix, ackAt, 'measured'];
      inFlight += 1;
      try {
        await call('PATCH', `/v1/tasks/${taskIds[n % taskIds.length]}`, { name: `${namePrefix}${n}` });
        acks[n] = performance.now();
      } catch (error) {
        failures[kind] += 1;
        if (failures[kind] <= 3) log(`  ${label}: ${ofLeadIn ? 'lead-in ' : ''}PATCH failed: ${error.message}`);
      } finally {
        inFlight -= 1;
      }
    };
    // When each change reached Kafka, which splits the event-to-delivery latency into tasks (commit →
    // relay → Kafka) and webhooks (Kafka → receiver): the record's timestamp (CreateTime, set by the
    // tasks service's producer), on this process's clock. A tap on task-events.v1 (own group) reads
    // it; the time comes from the record, not from when the tap fetched it, so the tap fetches lazily.
    const inKafkaAt = new Array(count).fill(null);
    const tap = kafka.consumer({ groupId: `bench-tap-${marker}`, maxWaitTimeInMs: 500, minBytes: 256 * 1024 });
    await tap.connect();
    await tap.subscribe({ topic: 'task-events.v1', fromBeginning: false });
    let tapReady;
    const tapAssigned = new Promise((resolve) => (tapReady = resolve));
    tap.on(tap.events.GROUP_JOIN, () => tapReady());
    const marked = Buffer.from(prefix);
    void tap.run({
      eachMessage: async ({ message }) => {
        const value = message.value;
        const found = value ? value.indexOf(marked) : -1;
        if (found < 0) return;
        let seq = 0;
        for (let i = found + marked.length; value[i] >= 0x30 && value[i] <= 0x39; i += 1) seq = seq * 10 + value[i] - 0x30;
        if (seq < count) inKafkaAt[seq] ??= Number(message.timestamp) - performance.timeOrigin;
      },
    });
    await Promise.race([tapAssigned, sleep(15_000)]);
    await sleep(500);
    sampleLoad(`webhooks ${label} start`);
    // The load generator's own loop: a busy loop here stamps acknowledgements late (the receiver has its own thread).
    const benchLoopDelay = monitorEventLoopDelay({ resolution: 5 });
    const statements = await statementStats(stack.infra.databaseUrl);
    let cpu;
    const startMeasuring = () => {
      benchLoopDelay.enable();
      statements.reset();
      cpu = cpuMeter();
      started = performance.now();
      if (stallMs > 0) stallWebhooks(stack, stallMs);
    };
    let maxInFlight = 0;
    if (rate) {
      const total = leadIn + count;
      let sent = 0;
      const pending = [];
      const sendStart = performance.now();
      let lastProgress = sendStart;
      while (sent < total) {
        const due = Math.min(total, Math.floor(((performance.now() - sendStart) / 1000) * rate));
        for (; sent < due; sent += 1) {
          if (sent === leadIn) startMeasuring();
          pending.push(sent < leadIn ? patch(sent, true) : patch(sent - leadIn));
        }
        if (sent > leadIn) maxInFlight = Math.max(maxInFlight, inFlight);
        if (performance.now() - lastProgress >= 5_000) {
          lastProgress = performance.now();
          const phase = sent <= leadIn ? `lead-in ${sent}/${leadIn}` : `${sent - leadIn}/${count}`;
          log(`  ${label}: ${phase} changes sent, ${received} deliveries received, ${inFlight} PATCHes in flight`);
        }
        await sleep(2);
      }
      await Promise.all(pending);
    } else {
      startMeasuring();
      await inParallel(count, concurrency, (seq) => patch(seq));
    }
    const sendSeconds = (performance.now() - started) / 1000;
    const acked = ackAt.filter((value) => value !== null).length;
    const expected = acked * endpoints;
    const leadInAcked = leadInAckAt.filter((value) => value !== null).length;
    const leadInExpected = leadInAcked * endpoints;
    log(`  ${label}: ${acked} changes acknowledged in ${sendSeconds.toFixed(1)} s (${failures.measured} failed); waiting for ${expected} deliveries`);
    const waitDeadline = performance.now() + 60_000;
    let lastLog = performance.now();
    while ((firstDelivery.size < expected || leadInDeliveries.size < leadInExpected) && performance.now() < waitDeadline) {
      if (performance.now() - lastLog >= 5_000) {
        lastLog = performance.now();
        log(`  ${label}: ${firstDelivery.size}/${expected} deliveries`);
      }
      await sleep(100);
    }
    await sleep(1_000); // late duplicates
    const cpuCores = cpu();
    const topStatements = await statements.collect();
    benchLoopDelay.disable();
    await tap.disconnect();
    sampleLoad(`webhooks ${label} end`);
    const toKafka = [];
    const fromKafka = [];
    for (const [id, receivedAt] of firstDelivery) {
      const seq = Number(id.split(' ')[1]);
      if (inKafkaAt[seq] === null) continue;
      fromKafka.push(receivedAt - inKafkaAt[seq]);
    }
    for (let seq = 0; seq < count; seq += 1) if (inKafkaAt[seq] !== null && ackAt[seq] !== null) toKafka.push(inKafkaAt[seq] - ackAt[seq]);
    toKafka.sort((a, b) => a - b);
    fromKafka.sort((a, b) => a - b);
    const stats = (sorted) => ({ p50: round(percentile(sorted, 50), 1), p99: round(percentile(sorted, 99), 1), samples: sorted.length });
    receiver.state.onDelivery = null;
    latencies.sort((a, b) => a - b);
    const latencyBySecond = Array.from(latenciesBySecond, (values = []) => {
      values.sort((a, b) => a - b);
      return { deliveries: values.length, p50: round(percentile(values, 50), 1), p99: round(percentile(values, 99), 1) };
    });
    const duplicateDeliveries = [...deliveryIds.values()].reduce((sum, times) => sum + (times - 1), 0);
    const spanSeconds = firstReceivedAt === null ? null : (lastReceivedAt - started) / 1000;
    const result = {
      label,
      changes: count,
      targetChangesPerSecond: rate ?? null,
      concurrency: rate ? null : concurrency,
      endpoints,
      acknowledgedChanges: acked,
      failedChanges: failures.measured,
      achievedChangesPerSecond: round(acked / sendSeconds, 0),
      offeredDeliveriesPerSecond: rate ? rate * endpoints : null,
      maxPatchesInFlight: rate ? maxInFlight : concurrency,
      ...(leadIn
        ? {
            leadIn: {
              changes: leadIn,
              seconds: rate ? leadIn / rate : null,
              acknowledgedChanges: leadInAcked,
              failedChanges: failures.leadIn,
              lost: leadInExpected - leadInDeliveries.size,
              duplicateRequests: leadInReceived - leadInDeliveries.size,
              latencyMs: (() => {
                leadInLatencies.sort((a, b) => a - b);
                return { p50: round(percentile(leadInLatencies, 50), 1), p99: round(percentile(leadInLatencies, 99), 1) };
              })(),
            },
          }
        : {}),
      expectedDeliveries: expected,
      deliveredUnique: firstDelivery.size,
      lost: expected - firstDelivery.size,
      requestsReceived: received,
      duplicateRequests: received - firstDelivery.size,
      duplicateDeliveryIdRequests: duplicateDeliveries,
      foreignRequests: foreign,
      // From the first PATCH sent to the last delivery received.
      deliveriesPerSecond: spanSeconds ? round(firstDelivery.size / spanSeconds, 0) : null,
      // From the first to the last delivery received (the pipeline's own rate once it is busy).
      deliveriesPerSecondBetweenFirstAndLast:
        firstReceivedAt !== null && lastReceivedAt > firstReceivedAt ? round(firstDelivery.size / ((lastReceivedAt - firstReceivedAt) / 1000), 0) : null,
      latencyMs: {
        p50: round(percentile(latencies, 50), 1),
        p90: round(percentile(latencies, 90), 1),
        p99: round(percentile(latencies, 99), 1),
        max: round(latencies.at(-1) ?? null, 1),
        samples: latencies.length,
      },
      latencyBySecond,
      ...(stallMs > 0 ? { stallMs, caughtUpAfterS: caughtUpAfter(latencyBySecond) } : {}),
      // ack → the event seen on task-events.v1 (tasks: outbox relay), and Kafka → receiver (webhooks service).
      ackToKafkaMs: stats(toKafka),
      kafkaToReceiverMs: stats(fromKafka),
      cpuCores,
      ...(topStatements ? { topStatements } : {}),
      benchEventLoopDelayMs: {
        p99: round(benchLoopDelay.percentile(99) / 1e6, 1),
        max: round(benchLoopDelay.max / 1e6, 1),
      },
      loadavgAtEnd: load(),
    };
    log(
      `  ${label}: ${result.deliveredUnique}/${expected} delivered, ${result.deliveriesPerSecondBetweenFirstAndLast} deliveries/s between the first and last (${result.deliveriesPerSecond} from the first change sent), p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms (ack→Kafka p50 ${result.ackToKafkaMs.p50}/p99 ${result.ackToKafkaMs.p99}, Kafka→receiver p50 ${result.kafkaToReceiverMs.p50}/p99 ${result.kafkaToReceiverMs.p99}), lost ${result.lost}, duplicates ${result.duplicateRequests}; CPU (cores) ${JSON.stringify(cpuCores)}; bench event-loop delay p99 ${result.benchEventLoopDelayMs.p99}/max ${result.benchEventLoopDelayMs.max} ms; load ${result.loadavgAtEnd[0]}`,
    );
    if (result.leadIn) {
      const lead = result.leadIn;
      log(
        `    lead-in (${lead.changes} changes in the ${lead.seconds} s before): p50 ${lead.latencyMs.p50} ms, p99 ${lead.latencyMs.p99} ms, lost ${lead.lost}, duplicates ${lead.duplicateRequests}`,
      );
    }
    if (rate) log(`    p99 ms by second: ${latencyBySecond.map((second) => Math.round(second.p99 ?? 0)).join(' ')}`);
    if (stallMs > 0) {
      log(`    after a ${stallMs} ms stall of the webhooks service: ${result.caughtUpAfterS === null ? 'never caught up' : `p99 ≤ ${targets.deliveryP99Ms} ms in every second from second ${result.caughtUpAfterS}`}`);
    }
    for (const statement of topStatements ?? []) {
      log(`    pg: ${statement.msPerSecond} ms/s, ${statement.calls} calls × ${statement.meanMs} ms (planning ${statement.meanPlanMs}), ${statement.rowsPerCall} rows: ${statement.query}`);
    }
    return result;
  }

  // Long enough at the measured rate for every process on the path (V8, the broker) to compile the hot
  // code: after 10 s the stack was still draining the backlog of its cold start, and the measured run
  // began with seconds of p50 ~150 ms instead of ~50 ms.
  const warmupChanges = settings.webhookRate * settings.webhookWarmupS;
  log(`webhooks: warm-up (${warmupChanges} changes at ${settings.webhookRate}/s)`);
  await run({ label: 'warmup', count: warmupChanges, rate: settings.webhookRate, endpoints: endpointHosts.length });
  await waitForPipelineIdle(stack, 'webhooks: before the sustained run');
  const hostProbeMs = probeHostSpeed();
  log(`webhooks: host probe ${hostProbeMs} ms (lower is faster; see bench/README.md)`);
  const sustainedCount = settings.webhookRate * settings.webhookSeconds;
  log(
    `webhooks: sustained: ${settings.webhookRate} changes/s for ${settings.webhookSeconds} s × ${endpointHosts.length} endpoints = ${settings.webhookRate * endpointHosts.length} deliveries/s offered`,
  );
  // The first seconds after the step from idle to the rate are the lead-in (reported, not measured).
  const sustained = await run({
    label: 'sustained',
    count: sustainedCount,
    rate: settings.webhookRate,
    endpoints: endpointHosts.length,
    leadIn: Math.round(settings.webhookRate * settings.webhookLeadInS),
    stallMs: settings.webhookStallMs,
  });
  sustained.hostProbeMsBefore = hostProbeMs;
  await waitForPipelineIdle(stack, 'webhooks: before the burst');
  await registerEndpoints(Math.max(0, settings.burstEndpoints - endpointHosts.length));
  log(`webhooks: burst: ${settings.burstChanges} changes as fast as 64 connections go × ${endpointHosts.length} endpoints`);
  const burst = await run({ label: 'burst', count: settings.burstChanges, concurrency: 64, endpoints: endpointHosts.length });
  return {
    sustained,
    burst,
    receiver: { requests: receiver.state.total, badSignatures: receiver.state.badSignatures, unparsable: receiver.state.unparsable },
  };
}

/**
 * Freezes every webhooks instance for `ms` (as a long GC pause, a noisy neighbour or a throttled
 * container would): the events go on piling up in Kafka meanwhile.
 */
function stallWebhooks(stack, ms) {
  const pids = stack.services.instances.filter((instance) => instance.name === 'webhooks').map((instance) => instance.process.child.pid);
  const resume = () =>
    pids.forEach((pid) => {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // already gone
      }
    });
  cleanups.push(resume); // a failed run must not stop a frozen stack
  pids.forEach((pid) => process.kill(pid, 'SIGSTOP'));
  setTimeout(resume, ms);
}

/** The first second of the run from which every second's p99 is within the target, or null. */
function caughtUpAfter(latencyBySecond) {
  let from = null;
  latencyBySecond.forEach((second, index) => {
    if (second.p99 === null || second.p99 > targets.deliveryP99Ms) from = null;
    else from ??= index;
  });
  return from;
}

// ---------------------------------------------------------------------------------------------- main

/**
 * The sustained run offers exactly `rate × endpoints` deliveries a second. Sustaining that rate means
 * keeping pace with it: every delivery arrives, none later than the latency bound allows (p99). A
 * delivered-per-second figure cannot prove more: over the run it is the offered rate, give or take the
 * difference between the first and the last delivery's latency (±1.25 % at 250 ms over 20 s).
 */
function keptPace(run) {
  const leadInClean = !run.leadIn || (run.leadIn.lost === 0 && run.leadIn.duplicateRequests === 0);
  return run.offeredDeliveriesPerSecond >= targets.deliveriesPerSecond && run.lost === 0 && leadInClean && run.latencyMs.p99 <= targets.deliveryP99Ms;
}

function table(headers, rows) {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) => `| ${cells.map((cell, i) => String(cell).padEnd(widths[i])).join(' | ')} |`;
  return [line(headers), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

function report(results) {
  const lines = [];
  const mark = (ok) => (ok ? 'met' : 'MISSED');
  if (results.api) {
    lines.push(
      table(
        ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx/err', 'ceiling req/s', 'ceiling p99', 'ratio', 'target', 'result', 'CPU ms/req (ceiling)', 'CPU-cost ratio'],
        results.api.rows.map((row) => [
          row.endpoint,
          row.service.requestsPerSecond,
          row.service.p50Ms,
          row.service.p99Ms,
          `${row.service.non2xx}/${row.service.errors + row.service.timeouts}`,
          row.ceiling.requestsPerSecond,
          row.ceiling.p99Ms,
          `${row.ratio}×`,
          `≥ ${row.ratioTarget}×${row.p99TargetMs ? `, p99 ≤ ${row.p99TargetMs} ms` : ''}; 0 errors`,
          mark(row.met),
          `${row.service.serverCpuMsPerRequest} (${row.ceiling.serverCpuMsPerRequest})`,
          `${row.cpuCostRatio}×`,
        ]),
      ),
    );
  }
  if (results.webhooks) {
    const { sustained, burst } = results.webhooks;
    lines.push(
      '',
      table(
        ['webhook run', 'changes/s', 'endpoints', 'delivered', 'deliveries/s', 'p50 ms', 'p99 ms', 'lost', 'dup', 'target', 'result'],
        [sustained, burst].map((run) => {
          const sustainedRun = run.label === 'sustained';
          const ok = run.lost === 0 && run.duplicateRequests === 0 && (!sustainedRun || keptPace(run));
          return [
            run.label,
            run.achievedChangesPerSecond,
            run.endpoints,
            `${run.deliveredUnique}/${run.expectedDeliveries}`,
            run.deliveriesPerSecondBetweenFirstAndLast,
            run.latencyMs.p50,
            run.latencyMs.p99,
            run.lost,
            run.duplicateRequests,
            sustainedRun ? `keeps pace with ≥ ${targets.deliveriesPerSecond}/s offered: p99 ≤ ${targets.deliveryP99Ms} ms, 0 lost` : '(max) 0 lost',
            mark(ok),
          ];
        }),
      ),
    );
  }
  lines.push(
    '',
    table(
      ['process', 'pid', 'RSS MB after the run', 'RSS MB idle at start', 'V8 heap used/total MB', 'external MB', 'target', 'result'],
      results.rss.map((row) => [
        row.name,
        row.pid,
        row.rssMb,
        row.rssMbAtStart ?? '-',
        row.heapTotalMb ? `${row.heapUsedMb}/${row.heapTotalMb}` : '-',
        row.externalMb ?? '-',
        `< ${targets.rssMb} MB`,
        mark(row.rssMb !== null && row.rssMb < targets.rssMb),
      ]),
    ),
  );
  const probes = [`at start ${results.hostProbeMsAtStart} ms`];
  if (results.webhooks) probes.push(`before the sustained webhook run ${results.webhooks.sustained.hostProbeMsBefore} ms`);
  lines.push('', `host probe (the same CPU work timed on the idle stack; lower is faster): ${probes.join(', ')}`);
  lines.push(`load average (1/5/15 min): ${results.loadSamples.map((sample) => `${sample.phase}: ${sample.loadavg.join(' ')}`).join('; ')}`);
  return lines.join('\n');
}

async function main() {
  log(`settings ${JSON.stringify(settings)}`);
  await waitForQuietMachine();
  sampleLoad('start');
  const hostProbeMsAtStart = probeHostSpeed();
  log(`host probe ${hostProbeMsAtStart} ms (lower is faster)`);
  const pki = await createTestPki(domain);
  cleanups.push(() => rmSync(path.dirname(pki.caFile), { recursive: true, force: true }));
  // TTL 30 s: measure with the webhooks service's DNS cache on, as in production.
  const dns = await startTestDnsServer({ domain, defaultAddress: receiverAddress, defaultTtl: 30 });
  cleanups.push(() => dns.stop());
  const receiver = await startReceiver(pki);
  log(`receiver https://*.${domain}:${receiver.port} on ${receiverAddress}, DNS ${dns.address}`);

  log('starting the stack (Postgres, Kafka, MinIO, 4 services) — this takes a while');
  const extraEnv = {
    RATE_LIMIT_PER_SECOND: '0',
    AUTH_FAILURES_PER_MINUTE: '0',
    WEBHOOK_SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOWED_CIDRS: `${receiverAddress}/32`,
    WEBHOOK_DNS_SERVERS: dns.address,
    WEBHOOK_EXTRA_CA_FILE: pki.caFile,
    ...(env.BENCH_LOG_LEVEL ? { LOG_LEVEL: env.BENCH_LOG_LEVEL } : {}),
    // Added to the services' own NODE_OPTIONS (their memory settings), not instead of them.
    ...(env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: `${serviceMemoryEnv.NODE_OPTIONS} ${env.BENCH_NODE_OPTIONS}` } : {}),
    // Experiments with the services' settings, e.g. BENCH_EXTRA_ENV="WEBHOOK_ENDPOINT_CONCURRENCY=128,DATABASE_POOL_SIZE=30".
    ...Object.fromEntries(
      (env.BENCH_EXTRA_ENV ?? '')
        .split(',')
        .filter((pair) => pair.includes('='))
        .map((pair) => [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim()]),
    ),
  };
  if (env.BENCH_EXTRA_ENV) log(`services' extra environment: ${env.BENCH_EXTRA_ENV}`);
  const stack = await startStack({ label: 'bench', extraEnv });
  cleanups.push(() => stack.stop());
  log(`stack up: gateway ${stack.services.gatewayUrl}, logs in ${stack.logDir}`);
  for (const instance of stack.services.instances) watched.push({ name: instance.name, pid: instance.process.child.pid, serverSide: true });
  watched.push({ name: 'bench (load generator)', pid: process.pid });
  watched.push({ name: 'receiver (Go)', pid: receiver.pid });
  const rssAtStart = new Map(stack.services.instances.map((instance) => [instance.process.child.pid, rssMbOf(instance.process.child.pid)]));

  const results = {
    startedAt: new Date(t0).toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, totalMemMb: Math.round(os.totalmem() / 2 ** 20), node: process.version },
    settings,
    hostProbeMsAtStart,
    servicesExtraEnv: { BENCH_EXTRA_ENV: env.BENCH_EXTRA_ENV ?? null, BENCH_NODE_OPTIONS: env.BENCH_NODE_OPTIONS ?? null, BENCH_LOG_LEVEL: env.BENCH_LOG_LEVEL ?? null },
    targets,
  };
  if (settings.only !== 'webhooks') results.api = await benchApi(stack);
  if (settings.only !== 'api') {
    await waitForPipelineIdle(stack, 'before the webhook runs');
    for (let replica = 1; replica < settings.webhookReplicas; replica += 1) {
      const instance = await stack.services.startReplica('webhooks');
      watched.push({ name: `webhooks-${replica}`, pid: instance.process.child.pid, serverSide: true });
    }
    results.webhooks = await benchWebhooks(stack, receiver);
  }
  results.rss = stack.services.instances.map((instance) => ({
    name: instance.replica ? `${instance.name}-${instance.replica}` : instance.name,
    pid: instance.process.child.pid,
    rssMb: rssMbOf(instance.process.child.pid),
    rssMbAtStart: rssAtStart.get(instance.process.child.pid) ?? null,
  }));
  // Where the memory is: V8 heap vs. the rest (prom-client default metrics of each service's /metrics).
  for (const [i, instance] of stack.services.instances.entries()) {
    try {
      const text = await (await fetch(`${instance.opsUrl}/metrics`)).text();
      const metric = (name) => {
        const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(text);
        return match ? round(Number(match[1]) / 2 ** 20, 1) : null;
      };
      results.rss[i].heapTotalMb = metric('nodejs_heap_size_total_bytes');
      results.rss[i].heapUsedMb = metric('nodejs_heap_size_used_bytes');
      results.rss[i].externalMb = metric('nodejs_external_memory_bytes');
    } catch {
      // no metrics: RSS only
    }
  }
  if (results.api) results.rss.push({ name: 'ceiling (bare fastify, for reference)', pid: '-', rssMb: results.api.ceilingRssMb });
  sampleLoad('end');
  results.loadSamples = loadSamples;
  results.finishedAt = new Date().toISOString();
  results.logDir = stack.logDir;

  const text = report(results);
  process.stdout.write(`\n${text}\n`);
  const dir = path.join(here, 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${results.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(dir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  log(`results written to ${path.relative(repoRoot, file)} and bench/results/latest.json`);
}

try {
  await main();
} catch (error) {
  log(`failed: ${error.stack ?? error}`);
  process.exitCode = 1;
} finally {
  log('stopping the stack');
  await cleanup();
}
