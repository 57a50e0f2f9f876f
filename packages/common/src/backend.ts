import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { startGrpcServer, type GrpcServiceRegistration } from './grpc-server.js';
import { startOpsServer } from './ops-server.js';
import type { ReadinessCheck } from './readiness.js';
import { createLogger } from './logger.js';
import { createMetricsRegistry } from './metrics.js';
import { registerBuildInfo } from './platform-metrics.js';
import { exitOnStartupFailure, installShutdown, type InstalledShutdown, type ShutdownStep } from './shutdown.js';

export interface BackendOptions {
  logger: Logger;
  registry: Registry;
  host: string;
  grpcPort: number;
  opsPort: number;
  grpc: GrpcServiceRegistration[];
  readiness: ReadinessCheck[];
  /**
   * Run when shutdown starts, before the gRPC server drains: end long-lived streams (a drain waits
   * for every open call, so a stream left open would hold it until the grace period forces it).
   */
  draining?: ShutdownStep[];
  /** Background workers (relays, consumers) to stop after the gRPC server drained. */
  workers?: ShutdownStep[];
  /** Pools and clients to close last. */
  resources?: ShutdownStep[];
  graceMs?: number;
}

export interface RunningBackend {
  grpcPort: number;
  opsPort: number;
}

/**
 * The common life of a backend service: gRPC (+ grpc.health.v1) and ops HTTP up, and on SIGTERM:
 * readiness off, drain gRPC, stop workers (they commit their progress), close pools.
 */
export async function serveBackend(options: BackendOptions): Promise<RunningBackend> {
  const grpc = await startGrpcServer(options.grpc, { host: options.host, port: options.grpcPort, logger: options.logger });
  const ops = await startOpsServer({
    host: options.host,
    port: options.opsPort,
    registry: options.registry,
    readiness: options.readiness,
    logger: options.logger,
  });
  const graceMs = options.graceMs ?? 10_000;
  installShutdown(options.logger, [
    { name: 'readiness off', run: async () => ops.markShuttingDown() },
    ...(options.draining ?? []),
    { name: 'drain gRPC', run: () => grpc.shutdown(graceMs) },
    ...(options.workers ?? []),
    ...(options.resources ?? []),
    { name: 'ops server', run: () => ops.close() },
  ]);
  return { grpcPort: grpc.port, opsPort: ops.port };
}

/** What a backend service's `app.ts` builds (`buildApp`): tests call it, `runBackend` serves it. */
export interface BackendApp {
  grpc: GrpcServiceRegistration[];
  readiness: ReadinessCheck[];
  /** Starts what runs beside the gRPC API (consumers, relay, sweeper); called before serving. */
  start(): Promise<void>;
  /** Run when shutdown starts, before gRPC drains: end long-lived streams (optional). */
  draining?: ShutdownStep[];
  /** Stopped after gRPC drained, in order (they finish in-flight work and commit). */
  workers: ShutdownStep[];
  /** Closed last (pools, clients). */
  resources: ShutdownStep[];
}

/** The variables every backend's config has (see `backendEnv`). */
export interface BackendBaseConfig {
  LOG_LEVEL: Logger['level'];
  HOST: string;
  GRPC_PORT: number;
  OPS_PORT: number;
  GIT_REVISION?: string | undefined;
}

/**
 * A backend's whole `main.ts`: config → buildApp → start → serve, with the service's JSON logger
 * and metrics registry; any start-up failure exits non-zero with a message naming the problem.
 */
export async function runBackend<Config extends BackendBaseConfig>(
  service: string,
  loadConfig: () => Config,
  buildApp: (config: Config, logger: Logger, registry: Registry) => BackendApp,
): Promise<void> {
  const logger = createLogger(service);
  let starting: InstalledShutdown | undefined;
  try {
    const config = loadConfig();
    logger.level = config.LOG_LEVEL;
    const registry = createMetricsRegistry(service);
    registerBuildInfo(registry, { revision: config.GIT_REVISION });
    const app = buildApp(config, logger, registry);
    // SIGTERM while start-up still waits (the webhooks service on an unreachable Kafka, say) stops what
    // has started and exits 0, as it would once serving: a pod deleted during start-up is not killed.
    starting = installShutdown(logger, [...app.workers, ...app.resources]);
    await app.start();
    starting.uninstall();
    await serveBackend({ logger, registry, host: config.HOST, grpcPort: config.GRPC_PORT, opsPort: config.OPS_PORT, ...app });
  } catch (error) {
    // Stopping what was starting can fail its start: the shutdown then ends the process (exit 0).
    if (starting?.stopping) return;
    exitOnStartupFailure(logger, error);
  }
}
