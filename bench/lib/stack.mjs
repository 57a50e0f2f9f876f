// The stack under test (what `npm start` runs, with the bench's settings), its admin CLI, and the
// extra webhooks replicas of the webhook runs.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, serviceMemoryEnv, startStack } from '@tws/devstack';
import { onCleanup } from './cleanup.mjs';
import { watch } from './cpu.mjs';
import { log } from './log.mjs';
import { receiverAddress } from './receiver.mjs';
import { extraEnvPairs, servicesExtraEnv } from './settings.mjs';

/** The services' environment: limits off, the receiver's network allowed and trusted, the BENCH_* additions. */
function servicesEnv({ pki, dns, otlpEndpoint }) {
  const { BENCH_LOG_LEVEL: logLevel, BENCH_NODE_OPTIONS: nodeOptions } = servicesExtraEnv;
  return {
    RATE_LIMIT_PER_SECOND: '0',
    AUTH_FAILURES_PER_MINUTE: '0',
    WEBHOOK_SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOWED_CIDRS: `${receiverAddress}/32`,
    WEBHOOK_DNS_SERVERS: dns.address,
    WEBHOOK_EXTRA_CA_FILE: pki.caFile,
    ...(logLevel ? { LOG_LEVEL: logLevel } : {}),
    // BENCH_TRACING=1: traces exported to the bench's OTLP receiver, sampled as the services sample by default.
    ...(otlpEndpoint ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint } : {}),
    // Added to the services' own NODE_OPTIONS (their memory settings), not instead of them.
    ...(nodeOptions ? { NODE_OPTIONS: `${serviceMemoryEnv.NODE_OPTIONS} ${nodeOptions}` } : {}),
    // Experiments with the services' settings, e.g. BENCH_EXTRA_ENV="WEBHOOK_ENDPOINT_CONCURRENCY=128,DATABASE_POOL_SIZE=30".
    ...extraEnvPairs(),
  };
}

/** Starts Postgres, Kafka, MinIO, the local OpenID provider, the services and the app (services/web), and watches the CPU of each service, the bench and the receiver. */
export async function startBenchStack({ pki, dns, receiver }, otlpEndpoint) {
  log('starting the stack (Postgres, Kafka, MinIO, the OpenID provider, 4 services and the app) — this takes a while');
  const extraEnv = servicesEnv({ pki, dns, otlpEndpoint });
  if (otlpEndpoint) log(`traces on: OTEL_EXPORTER_OTLP_ENDPOINT=${otlpEndpoint} (default sampling)`);
  if (servicesExtraEnv.BENCH_EXTRA_ENV) log(`services' extra environment: ${servicesExtraEnv.BENCH_EXTRA_ENV}`);
  const stack = await startStack({ label: 'bench', extraEnv });
  onCleanup(() => stack.stop());
  log(`stack up: gateway ${stack.services.gatewayUrl}, app ${stack.services.webUrl}, provider ${stack.idp.issuer}, logs in ${stack.logDir}`);
  for (const instance of stack.services.instances) watch({ name: instance.name, pid: instance.process.child.pid, serverSide: true });
  watch({ name: 'bench (load generator)', pid: process.pid });
  watch({ name: 'receiver (Go)', pid: receiver.pid });
  return stack;
}

/** Starts webhooks replicas until there are `replicas` instances (the first is part of the stack). */
export async function startWebhookReplicas(stack, replicas) {
  for (let replica = 1; replica < replicas; replica += 1) {
    const instance = await stack.services.startReplica('webhooks');
    watch({ name: `webhooks-${replica}`, pid: instance.process.child.pid, serverSide: true });
  }
}

/** The pids of every webhooks instance. */
export const webhooksPids = (stack) =>
  stack.services.instances.filter((instance) => instance.name === 'webhooks').map((instance) => instance.process.child.pid);

/** Runs the admin CLI (`packages/admin-cli/dist/cli.js`) against the stack; its JSON answer. */
export async function adminCli(stack, args) {
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
