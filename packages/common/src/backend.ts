import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { startGrpcServer, type GrpcServiceRegistration } from './grpc-server.js';
import { startOpsServer } from './ops-server.js';
import type { ReadinessCheck } from './readiness.js';
import { installShutdown, type ShutdownStep } from './shutdown.js';

export interface BackendOptions {
  logger: Logger;
  registry: Registry;
  host: string;
  grpcPort: number;
  opsPort: number;
  grpc: GrpcServiceRegistration[];
  readiness: ReadinessCheck[];
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
    { name: 'drain gRPC', run: () => grpc.shutdown(graceMs) },
    ...(options.workers ?? []),
    ...(options.resources ?? []),
    { name: 'ops server', run: () => ops.close() },
  ]);
  return { grpcPort: grpc.port, opsPort: ops.port };
}
