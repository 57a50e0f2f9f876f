import { generateKeyPairSync, randomBytes } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Infrastructure } from './infra/index.js';
import { repoRoot } from './paths.js';
import { progress } from './progress.js';
import {
  failedOnTakenPort,
  freePort,
  reservePort,
  runCommand,
  startProcess,
  waitUntil,
  type ManagedProcess,
  type PortReservation,
} from './processes.js';
import { supervise, type RestartPolicy, type SupervisedProcess } from './supervisor.js';

export type ServiceName = 'tasks' | 'attachments' | 'webhooks' | 'gateway' | 'web';

const backendServices = ['tasks', 'attachments', 'webhooks'] as const;
const migratedServices = ['tasks', 'attachments', 'webhooks', 'web'] as const;
/** The edges: HTTP only, stopped first. */
const edgeServices: readonly ServiceName[] = ['gateway', 'web'];

export interface ServiceInstance {
  name: ServiceName;
  replica: number;
  /** The running process (with a restart policy: the current one, replaced at each restart). */
  readonly process: ManagedProcess;
  /** Set when the service is restarted after a crash (`npm start`). */
  supervisor?: SupervisedProcess;
  /** Base URL of its HTTP endpoints (/healthz, /readyz, /metrics). */
  opsUrl: string;
  /** The web service's public base URL (its APP_URL; pages on their own port, probes on opsUrl). */
  appUrl?: string;
  grpcPort?: number;
  env: NodeJS.ProcessEnv;
}

export interface RunningServices {
  gatewayUrl: string;
  /**
   * The people-facing app (services/web), started only when the environment names an OpenID
   * provider (OIDC_ISSUER_URL, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET); its redirect URI is
   * `<webUrl>/auth/callback`.
   */
  webUrl?: string;
  instances: ServiceInstance[];
  /** Environment every service was given (for tests that start more replicas). */
  sharedEnv: NodeJS.ProcessEnv;
  /** Starts one more replica of a service, waiting until it is ready. */
  startReplica(name: ServiceName, extraEnv?: NodeJS.ProcessEnv): Promise<ServiceInstance>;
  stop(): Promise<void>;
}

/** kafkajs 2.2.4 schedules negative timeouts on Node 24 (tulios/kafkajs#1751): harmless, Node clamps them to 1 ms. */
export const nodeFlags = ['--disable-warning=TimeoutNegativeWarning'];

/**
 * A service process's flags: the above and the tracing preload (packages/common/src/tracing.ts),
 * which starts OpenTelemetry before the service's modules load when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
export const serviceNodeFlags = [...nodeFlags, '--import', pathToFileURL(path.join(repoRoot, 'packages', 'common', 'dist', 'tracing.js')).href];

/**
 * V8 flags of one service, before its other flags (the images' CMD carries the same: docker/Dockerfile).
 * The tasks service lets its old generation double after a full GC (`--heap-growing-percent`, a flag
 * Node refuses in NODE_OPTIONS). With ~30 MB live, V8's own factor (~1.5) left it less headroom than
 * its young generation holds, so it marked almost without pause: a full GC every third scavenge
 * under load, ~18 % of its CPU (bench/HISTORY.md, session 23). The other services keep V8's factor:
 * with it doubled, the gateway and the webhooks service passed 200 MB resident in a full bench run.
 * The gateway turns V8's allocation-site pretenuring off. With traces on, some gateway processes
 * (two of four traced GET-only runs without the flag) spent ~110 µs of CPU a GET for their whole life instead of
 * ~86 and served 10–15 % fewer; the one profiled spent 5.4 µs a GET in `process.nextTick` alone,
 * building its tick objects (0.5 in a process that ran well, 0.8 untraced): the mark of an
 * allocation site V8 has pretenured, its objects made in the old generation and every store into
 * them through the write barrier. With the flag: 1.5 µs, and no such process in four runs
 * (bench/HISTORY.md, session 30).
 */
export const serviceV8Flags: Readonly<Partial<Record<ServiceName, readonly string[]>>> = {
  tasks: ['--heap-growing-percent=100'],
  gateway: ['--no-allocation-site-pretenuring'],
};

/**
 * The memory settings the service images carry (docker/Dockerfile, ENV): a bounded V8 heap
 * (128 MiB old space, 8 MiB semi-spaces: garbage is collected before it piles up) and two malloc
 * arenas instead of one per thread, so each service stays well under 200 MB resident under load.
 */
export const serviceMemoryEnv: NodeJS.ProcessEnv = {
  NODE_OPTIONS: '--max-old-space-size=128 --max-semi-space-size=8',
  MALLOC_ARENA_MAX: '2',
};

const entryPoint = (name: ServiceName, file = 'main.js'): string => path.join(repoRoot, 'services', name, 'dist', file);

/** A service could not bind a port chosen for it: someone else took it in between. */
class PortTakenError extends Error {
  constructor(override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

export function infrastructureEnv(infra: Infrastructure): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: infra.databaseUrl,
    KAFKA_BROKERS: infra.kafkaBrokers.join(','),
    KAFKA_TOPIC_REPLICATION_FACTOR: String(infra.kafkaTopicReplication.replicationFactor),
    KAFKA_TOPIC_MIN_INSYNC_REPLICAS: String(infra.kafkaTopicReplication.minInsyncReplicas),
    S3_ENDPOINT: infra.s3.endpoint,
    S3_PUBLIC_ENDPOINT: infra.s3.endpoint,
    S3_ACCESS_KEY: infra.s3.accessKey,
    S3_SECRET_KEY: infra.s3.secretKey,
  };
}

/** Runs every service's migrations (schemas, tables, Kafka topics), idempotently. */
export async function migrateAll(env: NodeJS.ProcessEnv): Promise<void> {
  for (const name of migratedServices) {
    progress(`migrating ${name}`);
    await runCommand(process.execPath, [...nodeFlags, entryPoint(name, 'migrate.js')], {
      what: `migrations of the ${name} service`,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    });
  }
}

/**
 * Starts the four services (and the web service when an OpenID provider is configured) as separate processes talking gRPC on loopback, each on free ports,
 * and waits until each answers /readyz.
 */
export async function startServices(options: {
  infra: Infrastructure;
  logDir: string;
  extraEnv?: NodeJS.ProcessEnv;
  replicas?: number;
  gatewayPort?: number;
  /**
   * The web service's port (its APP_URL is http://127.0.0.1:<port>), for a provider whose redirect
   * URI `<APP_URL>/auth/callback` is registered before the services start: a number, or a port held
   * (reserved) until the app starts, so nothing else takes it meanwhile; default: a reserved port.
   */
  webPort?: number | PortReservation;
  /** Restart a service that exits unexpectedly (`npm start`); without it a crash stays visible (tests). */
  restart?: RestartPolicy;
}): Promise<RunningServices> {
  const instances: ServiceInstance[] = [];
  const sharedEnv: NodeJS.ProcessEnv = {
    // Defaults the caller's environment may override, as the images' ENV lines can be.
    ...serviceMemoryEnv,
    ...process.env,
    ...infrastructureEnv(options.infra),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    ...options.extraEnv,
  };
  const grpcTargets: Partial<Record<ServiceName, string[]>> = {};
  const gateways: ServiceInstance[] = [];
  // The people-facing app needs an OpenID provider: started only when one is configured. Its port is
  // chosen before the gateways start, which name the app (task URLs, the authorization server).
  const withWeb = Boolean(sharedEnv.OIDC_ISSUER_URL && sharedEnv.OIDC_CLIENT_ID && sharedEnv.OIDC_CLIENT_SECRET);
  const webReservation = typeof options.webPort === 'object' ? options.webPort : withWeb && options.webPort === undefined ? await reservePort() : undefined;
  const webPort = typeof options.webPort === 'number' ? options.webPort : webReservation?.port;
  if (!withWeb) await webReservation?.release();
  const webAppUrl = withWeb && webPort !== undefined ? `http://127.0.0.1:${webPort}` : undefined;

  const launchOnce = async (name: ServiceName, replica: number, extraEnv: NodeJS.ProcessEnv): Promise<ServiceInstance> => {
    const opsPort = name === 'gateway' && replica === 0 && options.gatewayPort !== undefined ? options.gatewayPort : await freePort();
    const grpcPort = edgeServices.includes(name) ? undefined : await freePort();
    const appPort = name === 'web' ? (replica === 0 && webPort !== undefined ? webPort : await freePort()) : undefined;
    const appUrl = appPort === undefined ? undefined : `http://127.0.0.1:${appPort}`;
    const env: NodeJS.ProcessEnv = {
      ...sharedEnv,
      HOST: '127.0.0.1',
      ...(name === 'gateway'
        ? // Attachment URLs are built from PUBLIC_BASE_URL, never from a request's Host: here, the replica's own address.
          // The MCP server's task resources live under the app's URL, which is also the authorization server.
          {
            PORT: String(opsPort),
            PUBLIC_BASE_URL: sharedEnv.PUBLIC_BASE_URL || `http://127.0.0.1:${opsPort}`,
            ...(webAppUrl
              ? {
                  APP_PUBLIC_URL: sharedEnv.APP_PUBLIC_URL || webAppUrl,
                  OAUTH_AUTHORIZATION_SERVER_URL: sharedEnv.OAUTH_AUTHORIZATION_SERVER_URL || webAppUrl,
                  // The gateway trusts the app's access tokens (its JWKS at {app_url}/oauth/jwks), next to the dev key.
                  AUTH_APP_ISSUER_URL: sharedEnv.AUTH_APP_ISSUER_URL || webAppUrl,
                }
              : {}),
          }
        : name === 'web'
          ? // Pages on PORT (APP_URL), probes and metrics on OPS_PORT; a fresh session secret per stack;
            // the task page links attachments to the API's public base URL (the first gateway's PUBLIC_BASE_URL).
            {
              PORT: String(appPort),
              OPS_PORT: String(opsPort),
              APP_URL: appUrl,
              SESSION_SECRET: sharedEnv.SESSION_SECRET || webSessionSecret,
              // The authorization server's signing key (a fresh ES256 key per stack unless given).
              OAUTH_SIGNING_KEYS: sharedEnv.OAUTH_SIGNING_KEYS || webOAuthSigningKeys,
              API_PUBLIC_BASE_URL: gateways[0]?.env.PUBLIC_BASE_URL ?? '',
            }
          : { OPS_PORT: String(opsPort), GRPC_PORT: String(grpcPort) }),
      ...peerTargets(grpcTargets),
      ...extraEnv,
    };
    const label = replica === 0 ? name : `${name}-${replica}`;
    // Same ports and environment at every restart, so peers' targets stay valid.
    const flags = [...(serviceV8Flags[name] ?? []), ...serviceNodeFlags, entryPoint(name)];
    const start = (): ManagedProcess => startProcess(label, process.execPath, flags, { logDir: options.logDir, env });
    const supervisor = options.restart ? supervise(label, start, options.restart) : undefined;
    // The app's reserved port is let go only now, for the app to bind it.
    if (name === 'web' && replica === 0) await webReservation?.release();
    const first = supervisor?.current ?? start();
    const opsUrl = `http://127.0.0.1:${opsPort}`;
    try {
      await waitUntil(`${name} service`, async () => (await fetch(`${opsUrl}/readyz`)).ok, {
        timeoutMs: 60_000,
        process: first,
      });
    } catch (error) {
      // A service that cannot start is a start-up failure, not something to retry, unless a port it
      // was given was taken between choosing it and binding it (another stack on the same machine).
      const portTaken = await failedOnTakenPort(first);
      await (supervisor ?? first).stop();
      throw portTaken ? new PortTakenError(error) : error;
    }
    const instance: ServiceInstance = {
      name,
      replica,
      get process() {
        return supervisor?.current ?? first;
      },
      opsUrl,
      env,
      ...(grpcPort ? { grpcPort } : {}),
      ...(appUrl ? { appUrl } : {}),
      ...(supervisor ? { supervisor } : {}),
    };
    instances.push(instance);
    return instance;
  };

  const launch = async (name: ServiceName, replica: number, extraEnv: NodeJS.ProcessEnv = {}): Promise<ServiceInstance> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await launchOnce(name, replica, extraEnv);
      } catch (error) {
        if (!(error instanceof PortTakenError) || attempt >= 3) throw error instanceof PortTakenError ? error.cause : error;
        // Freely chosen ports are chosen anew; a fixed one (the app's, a given gateway port) is tried again shortly.
        progress(`${name}: a port was taken before it could bind it; starting it again (attempt ${attempt + 1})`);
        await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
      }
    }
  };

  // Gateways first so no new work reaches the backends, then the backends.
  // A supervised service is stopped through its supervisor, so the stop is not taken for a crash.
  const stopAll = async (): Promise<void> => {
    const stop = (i: ServiceInstance): Promise<void> => (i.supervisor ?? i.process).stop();
    await Promise.all(instances.filter((i) => edgeServices.includes(i.name)).map(stop));
    await Promise.all(instances.filter((i) => !edgeServices.includes(i.name)).map(stop));
  };

  const replicas = options.replicas ?? 1;
  let webUrl: string | undefined;
  try {
    for (const name of backendServices) {
      for (let replica = 0; replica < replicas; replica++) {
        const instance = await launch(name, replica);
        (grpcTargets[name] ??= []).push(`127.0.0.1:${instance.grpcPort}`);
      }
      progress(`${name} ready (${replicas} replica${replicas > 1 ? 's' : ''})`);
    }
    for (let replica = 0; replica < replicas; replica++) gateways.push(await launch('gateway', replica));
    progress(`gateway ready at ${gateways[0]!.opsUrl}`);
    if (withWeb) {
      webUrl = (await launch('web', 0)).appUrl;
      progress(`web ready at ${webUrl}`);
    }
  } catch (error) {
    // Nothing left behind: the services already started, and the app's port if it was still held.
    await webReservation?.release();
    await stopAll();
    throw error;
  }

  return {
    gatewayUrl: gateways[0]!.opsUrl,
    ...(webUrl ? { webUrl } : {}),
    instances,
    sharedEnv,
    startReplica: (name, extraEnv) =>
      launch(name, instances.filter((instance) => instance.name === name).length, extraEnv),
    stop: stopAll,
  };
}

/** The web service's SESSION_SECRET when the environment gives none (sessions then end with the stack). */
const webSessionSecret = randomBytes(32).toString('base64url');

/** The web service's OAUTH_SIGNING_KEYS when the environment gives none: one ES256 key per stack (its tokens end with the stack). */
const webOAuthSigningKeys = JSON.stringify({
  keys: [{ ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), kid: `dev-${randomBytes(6).toString('hex')}`, alg: 'ES256' }],
});

/** With several replicas the gateway balances over all of them (round robin over a static list). */
function peerTargets(targets: Partial<Record<ServiceName, string[]>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of backendServices) {
    const list = targets[name];
    if (list?.length) env[`${name.toUpperCase()}_GRPC_TARGET`] = list.length === 1 ? list[0] : `ipv4:${list.join(',')}`;
  }
  return env;
}
