import * as grpc from '@grpc/grpc-js';
import { SpanKind } from '@opentelemetry/api';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';
import { DomainError, grpcStatusOfFailure } from './errors.js';
import { findNul, nulMessage } from './nul.js';
import type { GrpcServerMetrics } from './metrics.js';
import { observeLatency } from './exemplars.js';
import { isDatabaseUnavailable } from './db.js';
import { runAsMetadataCaller } from './audit/actor.js';
import { endGrpcSpan, inGrpcServerContext, startGrpcServerSpan, type GrpcServerTrace } from './grpc-trace.js';

export type UnaryHandler<Req, Res> = (request: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>;

export interface GrpcServiceRegistration {
  /** Fully-qualified proto service name, e.g. `tasks.v1.TasksService`. */
  name: string;
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
}

interface InstrumentOptions {
  service: string;
  logger: Logger;
  metrics: GrpcServerMetrics;
}

/**
 * The status a failed call answers: a DomainError's own (its message as details), UNAVAILABLE when
 * the database is, else INTERNAL with the details only logged.
 */
export function failureStatus(error: unknown, logger: Logger, method: string): { code: grpc.status; details: string } {
  if (error instanceof DomainError) return { code: grpcStatusOfFailure[error.kind], details: error.message };
  if (isDatabaseUnavailable(error)) {
    logger.warn({ err: error, method }, 'database unavailable');
    return { code: grpc.status.UNAVAILABLE, details: 'database unavailable, retry later' };
  }
  logger.error({ err: error, method }, 'unhandled error in gRPC handler');
  return { code: grpc.status.INTERNAL, details: 'internal error' };
}

/**
 * Turns an async handler into a grpc-js unary handler that maps DomainError to its status,
 * hides unexpected errors behind INTERNAL, and records metrics.
 */
export function unary<Req, Res>(
  method: string,
  handler: UnaryHandler<Req, Res>,
  options: InstrumentOptions,
): grpc.handleUnaryCall<Req, Res> {
  const labels = { grpc_service: options.service, grpc_method: method };
  const serve = (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>, traced: GrpcServerTrace | undefined): void => {
    const started = performance.now();
    const finish = (code: grpc.status): void => {
      const codeName = grpc.status[code] ?? String(code);
      endGrpcSpan(traced?.span, code, SpanKind.SERVER);
      observeLatency(options.metrics.handling, { ...labels, grpc_code: codeName }, (performance.now() - started) / 1000, traced?.context);
      options.metrics.handled.inc({ ...labels, grpc_code: codeName });
      // One line per call at debug level (off by default): with the caller's request id (logger.ts).
      if (options.logger.isLevelEnabled('debug')) {
        options.logger.debug({ method, code: codeName, ms: Math.round(performance.now() - started) }, 'gRPC call finished');
      }
    };
    // gRPC is an edge too: a string with U+0000 (which Postgres refuses) is an invalid argument here.
    const nulAt = findNul(call.request);
    const handled = nulAt === undefined ? handler(call.request, call) : Promise.reject(new DomainError('invalid_argument', `${nulAt.slice(1)}: ${nulMessage}`));
    handled.then(
      (response) => {
        finish(grpc.status.OK);
        callback(null, response);
      },
      (error: unknown) => {
        const failure = failureStatus(error, options.logger, method);
        finish(failure.code);
        callback({ code: failure.code, details: failure.details, ...(error instanceof DomainError ? { name: error.name, message: error.message } : {}) });
      },
    );
  };
  // The caller's request id (x-request-id metadata) is the context of the whole call: every line
  // the handler logs carries it, and every call it makes onwards passes it on (request-id.ts).
  // So is the caller's actor (x-tws-actor-bin, audit/actor.ts): the audit rows the call writes name
  // it; and its trace context (grpc-trace.ts): the call's SERVER span, parent of what it does.
  return (call, callback) => {
    const traced = startGrpcServerSpan(options.service, method, call.metadata);
    runAsMetadataCaller(call.metadata, () => inGrpcServerContext(traced, () => serve(call, callback, traced)));
  };
}

export interface RunningGrpcServer {
  server: grpc.Server;
  port: number;
  health: HealthImplementation;
  /** Reports NOT_SERVING, lets in-flight calls finish until the deadline, then forces. */
  shutdown(graceMs: number): Promise<void>;
}

export async function startGrpcServer(
  registrations: GrpcServiceRegistration[],
  options: { host: string; port: number; logger: Logger },
): Promise<RunningGrpcServer> {
  const server = new grpc.Server({
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_permit_without_calls': 1,
    // Clients reconnect (and re-resolve a headless Service's DNS) every few minutes, so new
    // replicas added by the autoscaler receive traffic; in-flight calls get the grace period.
    'grpc.max_connection_age_ms': 5 * 60_000,
    'grpc.max_connection_age_grace_ms': 30_000,
    // Channelz (per-call counters and timestamps for a debugging service we do not expose) off.
    'grpc.enable_channelz': 0,
  });
  const health = new HealthImplementation({ '': 'SERVING' });
  for (const registration of registrations) {
    server.addService(registration.definition, registration.implementation);
    health.setStatus(registration.name, 'SERVING');
  }
  health.addToServer(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${options.host}:${options.port}`, grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  options.logger.info({ port }, 'gRPC server listening');
  return {
    server,
    port,
    health,
    async shutdown(graceMs) {
      health.setStatus('', 'NOT_SERVING');
      for (const registration of registrations) health.setStatus(registration.name, 'NOT_SERVING');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
