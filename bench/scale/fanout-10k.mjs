// One task change fanned out to N endpoints of one workspace (issue #21 item 3; target: 10,000
// endpoints all received within 10 s, >= 1,000/s, each on its own host, so its own DNS answer and
// its own TLS connection; 0 lost, 0 duplicated). Starts the bench stack (bench/lib/stack.mjs) and the
// Go receiver, which checks every signature.
//
//   node_modules/.bin/node bench/scale/fanout-10k.mjs [endpoints=10000] [replicas=1]   (the pinned Node, as npm run bench uses)
//
// Prints one JSON object: registration time, then from the PATCH's acknowledgement the first and last
// delivery, deliveries/s, duplicates, bad signatures, the delivery log's rows, the webhooks service's
// CPU (cores) and peak RSS during the fan-out.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { apiClient, inParallel } from '../lib/api-client.mjs';
import { cleanup, trapSignals } from '../lib/cleanup.mjs';
import { cpuMeter } from '../lib/cpu.mjs';
import { load } from '../lib/load.mjs';
import { log } from '../lib/log.mjs';
import { domain, startReceiverSide } from '../lib/receiver.mjs';
import { rssMbOf } from '../lib/rss.mjs';
import { adminCli, startBenchStack, startWebhookReplicas, webhooksPids } from '../lib/stack.mjs';

const endpoints = Number(process.argv[2] ?? 10_000);
const replicas = Number(process.argv[3] ?? 1);
const timeoutMs = 120_000;

async function main() {
  const receiverSide = await startReceiverSide();
  const { receiver } = receiverSide;
  const stack = await startBenchStack(receiverSide);
  await startWebhookReplicas(stack, replicas);

  const created = await adminCli(stack, ['workspace', 'create', '--name', 'Bench fan-out', '--plan', 'pro']);
  const { call } = apiClient(stack.services.gatewayUrl, created.apiKey.key, 32);
  const project = (await call('POST', '/v1/projects', { name: 'Fan-out' })).json;
  const task = (await call('POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: 'Fan-out task' })).json;

  log(`registering ${endpoints} endpoints (one host each)`);
  const registrationStarted = performance.now();
  await inParallel(endpoints, 32, async (i) => {
    const host = `f${i}.${domain}`;
    const secret = randomBytes(24).toString('base64url');
    await receiver.addSecret(host, secret);
    await call('POST', '/v1/webhooks', { url: `https://${host}:${receiver.port}/hook`, secret, events: ['task.updated'] });
  });
  const registrationS = (performance.now() - registrationStarted) / 1000;
  await sleep(2_000);

  const hosts = new Map();
  const times = [];
  receiver.state.onDelivery = ({ host, receivedAt }) => {
    if (host.startsWith('f')) {
      hosts.set(host, (hosts.get(host) ?? 0) + 1);
      times.push(receivedAt);
    }
  };
  const badBefore = receiver.state.badSignatures;
  const pids = webhooksPids(stack);
  let peakRssMb = 0;
  const sampler = setInterval(() => {
    const total = pids.reduce((sum, pid) => sum + (rssMbOf(pid) ?? 0), 0);
    peakRssMb = Math.max(peakRssMb, total);
  }, 100);
  const loadBefore = load();
  const cpu = cpuMeter();
  const patched = performance.now();
  await call('PATCH', `/v1/tasks/${task.id}`, { name: 'Fan out now' });
  const acknowledged = performance.now();
  while (hosts.size < endpoints && performance.now() - acknowledged < timeoutMs) await sleep(20);
  const cores = cpu();
  clearInterval(sampler);
  await sleep(3_000); // late duplicates would arrive now

  const sorted = [...times].sort((a, b) => a - b);
  const lastS = ((sorted[endpoints - 1] ?? Number.NaN) - acknowledged) / 1000;
  const db = new pg.Client({ connectionString: stack.infra.databaseUrl });
  await db.connect();
  const { rows } = await db.query(
    `SELECT d.state, count(DISTINCT d.id)::int AS deliveries, count(a.id)::int AS attempts
     FROM webhooks.deliveries d JOIN webhooks.endpoints e ON e.id = d.endpoint_id LEFT JOIN webhooks.attempts a ON a.delivery_id = d.id
     WHERE e.workspace_id = $1 GROUP BY d.state`,
    [created.workspace?.id ?? created.id],
  );
  const durations = await db.query(
    `SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY a.duration_ms) AS p50, percentile_disc(0.99) WITHIN GROUP (ORDER BY a.duration_ms) AS p99,
            max(a.duration_ms) AS max
     FROM webhooks.attempts a JOIN webhooks.deliveries d ON d.id = a.delivery_id JOIN webhooks.endpoints e ON e.id = d.endpoint_id
     WHERE e.workspace_id = $1`,
    [created.workspace?.id ?? created.id],
  );
  await db.end();
  const result = {
    endpoints,
    replicas,
    registrationS: Number(registrationS.toFixed(1)),
    patchMs: Number((acknowledged - patched).toFixed(1)),
    firstDeliveryS: Number((((sorted[0] ?? Number.NaN) - acknowledged) / 1000).toFixed(3)),
    allReceivedS: Number(lastS.toFixed(2)),
    deliveriesPerSecond: Math.round(endpoints / lastS),
    received: hosts.size,
    lost: endpoints - hosts.size,
    duplicated: [...hosts.values()].reduce((sum, count) => sum + count - 1, 0),
    badSignatures: receiver.state.badSignatures - badBefore,
    deliveryLog: rows,
    attemptDurationMs: durations.rows[0],
    webhooksCpuMsPerDelivery: Number((((cores.webhooks ?? 0) * lastS * 1000) / endpoints).toFixed(2)),
    cpuCores: cores,
    webhooksPeakRssMb: Number(peakRssMb.toFixed(1)),
    loadBefore,
    loadAfter: load(),
    target: { allReceivedS: 10, deliveriesPerSecond: 1000, lost: 0, duplicated: 0 },
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

trapSignals();
try {
  await main();
} finally {
  await cleanup();
}
