import * as grpc from '@grpc/grpc-js';
import type { GrpcClientMetrics } from './metrics.js';

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

/** Calls a unary RPC and resolves with its response; rejects with the grpc-js ServiceError. */
export function callUnary<Req, Res>(
  client: grpc.Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  options: CallOptions = {},
): Promise<Res> {
  const full = method as unknown as FullUnaryMethod<Req, Res>;
  const deadline = Date.now() + (options.deadlineMs ?? 10_000);
  return new Promise<Res>((resolve, reject) => {
    full.call(client, request, options.metadata ?? new grpc.Metadata(), { deadline }, (error, response) => {
      if (error) reject(error);
      else if (response === undefined) reject(new Error('empty gRPC response'));
      else resolve(response);
    });
  });
}

export function isGrpcError(error: unknown): error is grpc.ServiceError {
  return typeof error === 'object' && error !== null && 'code' in error && 'details' in error && 'metadata' in error;
}

/** Client options shared by every service: keepalive, metrics interceptor, sane message limits. */
export function grpcClientOptions(service: string, metrics?: GrpcClientMetrics): grpc.ClientOptions {
  const interceptors: grpc.Interceptor[] = [];
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
