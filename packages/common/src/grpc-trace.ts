import * as grpc from '@grpc/grpc-js';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { projectTracer, tracingStarted } from './trace-context.js';

/**
 * The spans of gRPC calls, made by the project's own call wrappers (grpc-client.ts `callUnary`,
 * grpc-server.ts `unary`, the task list stream) instead of @opentelemetry/instrumentation-grpc.
 * The instrumentation patched every client constructor and server handler, and per call it built a
 * span, bound the callback and the call's emitters to the context and read the peer's address
 * before anything was sampled: ~1 µs of the gateway's and the tasks service's CPU a call at the
 * default 10 % sampling, for spans that are mostly never recorded (bench/HISTORY.md, session 15).
 * Here an unsampled call costs one `traceparent` in its metadata on the way out and one context on
 * the way in; only a recording span gets attributes.
 *
 * Spans as the instrumentation named them (`grpc.tasks.v1.TasksService/CreateTask`, CLIENT and
 * SERVER), with the RPC semantic conventions' attributes: `rpc.system`, `rpc.service`,
 * `rpc.method`, `rpc.grpc.status_code`, and `server.address`/`server.port` on the client side.
 * Health checks and the long-lived revocation stream get none.
 */

const metadataSetter: TextMapSetter<grpc.Metadata> = {
  set(metadata, key, value) {
    metadata.set(key, value);
  },
};

const metadataGetter: TextMapGetter<grpc.Metadata> = {
  get(metadata, key) {
    const values = metadata.get(key);
    if (values.length === 0) return undefined;
    const texts = values.filter((value): value is string => typeof value === 'string');
    return texts.length === 1 ? texts[0] : texts;
  },
  keys(metadata) {
    return Object.keys(metadata.getMap());
  },
};

/** `/tasks.v1.TasksService/CreateTask` → its service and method, as the span names and attributes them. */
function rpcOf(path: string): { service: string; method: string } {
  const slash = path.lastIndexOf('/');
  return { service: path.slice(1, slash), method: path.slice(slash + 1) };
}

/** `dns:///tasks:50051`, `dns:127.0.0.1:50051`, `tasks:50051` → host and port (the client's `server.*` attributes). */
export function serverAddressOf(target: string): { 'server.address': string; 'server.port'?: number } {
  const hostPort = target.replace(/^(?:dns|ipv4|ipv6|unix|unix-abstract|vsock):(?:\/\/[^/]*\/)?/, '');
  const match = /^\[?([^\]]*?)\]?:(\d+)$/.exec(hostPort);
  return match ? { 'server.address': match[1]!, 'server.port': Number(match[2]) } : { 'server.address': hostPort };
}

/**
 * Starts the CLIENT span of a call to `path` in the active context and puts its context (W3C
 * `traceparent`, and `baggage`) into `metadata`. Returns the span when it records (end it with
 * `endGrpcSpan`), else undefined: an unsampled call passes its trace on and needs nothing more.
 * `target` (the channel's) is read only for a recording span. Without the SDK: nothing, undefined.
 */
export function startGrpcClientSpan(path: string, metadata: grpc.Metadata, target: () => string): Span | undefined {
  if (!tracingStarted()) return undefined;
  const parent = context.active();
  const span = projectTracer().startSpan(`grpc.${path.slice(1)}`, { kind: SpanKind.CLIENT }, parent);
  propagation.inject(trace.setSpan(parent, span), metadata, metadataSetter);
  if (!span.isRecording()) return undefined;
  const { service, method } = rpcOf(path);
  span.setAttributes({ 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method, ...serverAddressOf(target()) });
  return span;
}

/** A served call's trace: the context to run its handler in, and its SERVER span (recording or not). */
export interface GrpcServerTrace {
  context: Context;
  span: Span;
}

/**
 * Starts the SERVER span of a served call to `service`/`method`, a child of the caller's context in
 * the call's metadata (a new trace, sampled as the sampler says, without one). Undefined without the SDK.
 */
export function startGrpcServerSpan(service: string, method: string, metadata: grpc.Metadata): GrpcServerTrace | undefined {
  if (!tracingStarted()) return undefined;
  const parent = propagation.extract(ROOT_CONTEXT, metadata, metadataGetter);
  const span = projectTracer().startSpan(`grpc.${service}/${method}`, { kind: SpanKind.SERVER }, parent);
  if (span.isRecording()) span.setAttributes({ 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method });
  return { context: trace.setSpan(parent, span), span };
}

/** The codes that are the server's fault (the RPC conventions): a SERVER span with one is an error. */
const serverFaults = new Set([
  grpc.status.UNKNOWN,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.UNIMPLEMENTED,
  grpc.status.INTERNAL,
  grpc.status.UNAVAILABLE,
  grpc.status.DATA_LOSS,
]);

/** Ends a call's span with its status: any failure is an error of a CLIENT span, a server fault of a SERVER span. */
export function endGrpcSpan(span: Span | undefined, code: grpc.status, kind: SpanKind.CLIENT | SpanKind.SERVER): void {
  if (span === undefined || !span.isRecording()) return;
  span.setAttribute('rpc.grpc.status_code', code);
  if (kind === SpanKind.CLIENT ? code !== grpc.status.OK : serverFaults.has(code)) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: grpc.status[code] ?? String(code) });
  }
  span.end();
}

/** Runs `fn` in a served call's trace context (as it is without one). */
export function inGrpcServerContext<T>(traced: GrpcServerTrace | undefined, fn: () => T): T {
  return traced === undefined ? fn() : context.with(traced.context, fn);
}
