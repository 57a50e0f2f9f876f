import * as grpc from '@grpc/grpc-js';
import { SpanKind } from '@opentelemetry/api';
import type { GrpcClientMetrics } from './metrics.js';
import { requestIdInterceptor } from './request-id.js';
import { actorInterceptor } from './audit/actor.js';
import { endGrpcSpan, startGrpcClientSpan } from './grpc-trace.js';

/** A unary client method as inferred from the last overload of a generated client. */
type UnaryMethod<Req, Res> = (request: Req, callback: grpc.requestCallback<Res>) => grpc.ClientUnaryCall;
type FullUnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

export interface CallOptions {
  deadlineMs?: number;
  metadata?: grpc.Metadata;
}

/** A failed call's error: grpc-js's ServiceError, with the RPC it came from. */
export type CallError = grpc.ServiceError & { grpcMethod?: string };

/** The RPC path (`/tasks.v1.TasksService/GetTasks`) grpc-js gives each method of a generated client. */
function pathOf(method: unknown): string | undefined {
  return typeof method === 'function' && 'path' in method && typeof method.path === 'string' ? method.path : undefined;
}

/**
 * Starts a call without the caller's stack trace grpc-js captures for every call (an `Error` made
 * in `makeUnaryRequest`, only read when the call fails). Deep in optimized request handling that
 * capture cost 30–45 µs of CPU a call in the gateway, ~2 % of its CPU per GET and PATCH
 * (bench/HISTORY.md session 13). A failed call names its RPC (`grpcMethod`) instead. The limit is
 * restored before anything else runs. grpc/grpc-node#3083 proposes a channel option for this.
 */
function withoutCallerStack(start: () => void): void {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    start();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Calls a unary RPC and resolves with its response; rejects with the grpc-js ServiceError (a CallError). */
export function callUnary<Req, Res>(
  client: grpc.Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  options: CallOptions = {},
): Promise<Res> {
  const full = method as unknown as FullUnaryMethod<Req, Res>;
  const deadline = Date.now() + (options.deadlineMs ?? 10_000);
  const metadata = options.metadata ?? new grpc.Metadata();
  const path = pathOf(method);
  const span = path === undefined ? undefined : startGrpcClientSpan(path, metadata, () => client.getChannel().getTarget());
  return new Promise<Res>((resolve, reject) => {
    const done: grpc.requestCallback<Res> = (error, response) => {
      endGrpcSpan(span, error ? error.code : grpc.status.OK, SpanKind.CLIENT);
      if (error) reject(Object.assign(error, { grpcMethod: path }) satisfies CallError);
      else if (response === undefined) reject(new Error('empty gRPC response'));
      else resolve(response);
    };
    withoutCallerStack(() => full.call(client, request, metadata, { deadline }, done));
  });
}

/**
 * Opens a server-streaming call to `path` with its CLIENT span (grpc-trace.ts), ended by the call's
 * status. `start` makes the call with the metadata given (which carries the trace context).
 */
export function callServerStream<Call extends grpc.ClientReadableStream<unknown>>(
  path: string,
  target: string,
  start: (metadata: grpc.Metadata) => Call,
): Call {
  const metadata = new grpc.Metadata();
  const span = startGrpcClientSpan(path, metadata, () => target);
  const call = start(metadata);
  if (span !== undefined) call.once('status', (status: grpc.StatusObject) => endGrpcSpan(span, status.code, SpanKind.CLIENT));
  return call;
}

// The generated clients' last overload is `(request, callback)`; conditional types read that one.
type RequestOf<M> = M extends (request: infer Req, callback: grpc.requestCallback<infer _Res>) => grpc.ClientUnaryCall ? Req : never;
type ResponseOf<M> = M extends (request: infer _Req, callback: grpc.requestCallback<infer Res>) => grpc.ClientUnaryCall ? Res : never;

/** Promise-returning unary calls of a generated client: `await api.GetWorkspace({ … })`. */
export type UnaryApi<Client, Name extends keyof Client> = {
  [N in Name]: (request: RequestOf<Client[N]>, options?: CallOptions) => Promise<ResponseOf<Client[N]>>;
};

/**
 * The one promisifier: the named unary RPCs of a generated client as promise-returning functions,
 * each call with `deadlineMs` unless the caller passes its own options.
 */
export function unaryApi<Client extends grpc.Client, const Name extends keyof Client & string>(
  client: Client,
  names: readonly Name[],
  deadlineMs: number,
): UnaryApi<Client, Name> {
  const api: Partial<Record<Name, (request: unknown, options?: CallOptions) => Promise<unknown>>> = {};
  for (const name of names) {
    const method = client[name] as UnaryMethod<unknown, unknown>;
    api[name] = (request: unknown, options?: CallOptions) => callUnary(client, method, request, { deadlineMs, ...options });
  }
  return api as UnaryApi<Client, Name>;
}

export function isGrpcError(error: unknown): error is grpc.ServiceError {
  return typeof error === 'object' && error !== null && 'code' in error && 'details' in error && 'metadata' in error;
}

/**
 * Client options shared by every service: keepalive, the request id of the request being served as
 * `x-request-id` metadata, its audit actor as `x-tws-actor-bin`, metrics interceptor, sane message limits.
 */
export function grpcClientOptions(service: string, metrics?: GrpcClientMetrics): grpc.ClientOptions {
  const interceptors: grpc.Interceptor[] = [requestIdInterceptor(), actorInterceptor()];
  if (metrics) interceptors.push(metricsInterceptor(service, metrics));
  return {
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.max_receive_message_length': 32 * 1024 * 1024,
    // A 300-task list (~140 KB) arrives without waiting for WINDOW_UPDATEs at the 64 KiB default.
    'grpc-node.flow_control_window': 4 * 1024 * 1024,
    // Channelz (per-call counters and timestamps for a debugging service we do not expose) off.
    'grpc.enable_channelz': 0,
    // Spread calls over every address the target resolves to (replicas behind a headless Service).
    'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
    interceptors,
  };
}

function metricsInterceptor(service: string, metrics: GrpcClientMetrics): grpc.Interceptor {
  return (options, nextCall) => {
    const path = options.method_definition.path;
    const method = path.slice(path.lastIndexOf('/') + 1);
    const stopTimer = metrics.handling.startTimer({ grpc_service: service, grpc_method: method });
    const requester = new grpc.RequesterBuilder()
      .withStart((metadata, _listener, next) => {
        const listener = new grpc.ListenerBuilder()
          .withOnReceiveStatus((status, nextStatus) => {
            stopTimer({ grpc_code: grpc.status[status.code] ?? String(status.code) });
            nextStatus(status);
          })
          .build();
        next(metadata, listener);
      })
      .build();
    return new grpc.InterceptingCall(nextCall(options), requester);
  };
}

/** Resolves when the channel is connected or rejects after the deadline. */
export function waitForReady(client: grpc.Client, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    client.waitForReady(Date.now() + timeoutMs, (error) => (error ? reject(error) : resolve()));
  });
}
