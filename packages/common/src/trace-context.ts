import {
  context,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

/**
 * Trace context helpers on the OpenTelemetry API alone. Without the SDK (tracing.ts starts it only
 * when an OTLP endpoint is set) the API is a no-op: no span is ever active, `currentTraceparent()`
 * is null and `inSpan` just runs its function.
 */
export { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';

/** W3C trace context, version 00: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>` (55 characters). */
const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const zeroTraceId = '0'.repeat(32);
const zeroSpanId = '0'.repeat(16);

/** The header (Kafka) and column value that carries a trace context between processes. */
export const traceparentHeader = 'traceparent';

/** The match of a sane `traceparent` (version 00, non-zero ids); null for anything else. */
function matchTraceparent(value: unknown): RegExpExecArray | null {
  if (typeof value !== 'string' || value.length !== 55) return null;
  const match = traceparentPattern.exec(value);
  return match === null || match[1] === zeroTraceId || match[2] === zeroSpanId ? null : match;
}

export function isSaneTraceparent(value: unknown): value is string {
  return matchTraceparent(value) !== null;
}

/** The `traceparent` of the span active here, or null (no SDK, or no span). */
export function currentTraceparent(): string | null {
  const span = trace.getActiveSpan();
  return span ? traceparentOf(span) : null;
}

/** The context whose (remote) parent is `traceparent`; the root context for anything not sane. */
export function contextOfTraceparent(traceparent: string | null | undefined): Context {
  const match = matchTraceparent(traceparent);
  if (match === null) return ROOT_CONTEXT;
  const [, traceId, spanId, flags] = match;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: traceId!, spanId: spanId!, traceFlags: Number.parseInt(flags!, 16), isRemote: true });
}

/** Trace id and span id of the span active here, for log lines (logger.ts). */
export function activeTraceIds(): { traceId: string; spanId: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return traceId === zeroTraceId ? undefined : { traceId, spanId };
}

let cachedTracer: { provider: TracerProvider; tracer: Tracer } | undefined;

/**
 * The project's tracer: looked up once per tracer provider (the global one changes only when the
 * SDK is stopped and started again, as tests do), not once per span: the lookup builds a key string
 * and searches the provider's map, for every request.
 */
export function projectTracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (cachedTracer?.provider !== provider) cachedTracer = { provider, tracer: provider.getTracer('task-workspace') };
  return cachedTracer.tracer;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent: a context (`contextOfTraceparent`); default the active one. */
  parent?: Context;
}

/**
 * Runs `fn` in a new span (ended when its promise settles; a rejection marks it as an error). `fn`
 * may add attributes (status codes, outcomes) to the span it gets.
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const active = context.active();
  const parent = options.parent ?? active;
  const span = startSpan(name, options, parent);
  if (!span.isRecording() && sameSpan(span.spanContext(), trace.getSpanContext(parent))) {
    // An unsampled child that carries its parent's own ids (UnsampledChildren of tracing-sdk.ts, or
    // the API without the SDK): the parent's context already says everything a context holding it
    // would (trace and span id for log lines and propagation, flags for the children's sampling),
    // and there is nothing to record or end. Most spans are such children at the default sampling
    // (in the webhooks service, two a delivery); this skips a context, a context switch and an
    // async frame for each.
    try {
      return parent === active ? fn(span) : context.with(parent, fn, undefined, span);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Starts a span the caller ends (e.g. one per message of a batch sent in one request). The
 * attributes go to a sampled span only: the SDK sanitizes the attributes given at start before it
 * samples, for every span, and most spans are not sampled (our samplers never read attributes).
 */
export function startSpan(name: string, options: SpanOptions, parent: Context = options.parent ?? context.active()): Span {
  const span = projectTracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL }, parent);
  if (options.attributes && span.isRecording()) span.setAttributes(options.attributes);
  return span;
}

/** Whether two span contexts are the same span (span id, trace id and flags); false when the second is missing. */
function sameSpan(a: SpanContext, b: SpanContext | undefined): boolean {
  return b !== undefined && a.spanId === b.spanId && a.traceId === b.traceId && a.traceFlags === b.traceFlags;
}

/**
 * The `traceparent` of `span` (for the header of a message it sends), or null when its context is not
 * valid. Without the SDK a span started under a remote parent is a no-op span carrying that parent's
 * context: its traceparent is the parent's, passed on unchanged.
 */
export function traceparentOf(span: Span): string | null {
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return null;
  return `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

let shutdownHook: (() => Promise<void>) | undefined;
let sdkStarted = false;

/** Set by tracing.ts once the SDK runs. */
export function setTracingShutdown(hook: () => Promise<void>): void {
  shutdownHook = hook;
  sdkStarted = true;
}

/** Whether tracing.ts started the SDK in this process (decided before the service's own modules load). */
export function tracingStarted(): boolean {
  return sdkStarted;
}

/** The trace id of the span in `at` (default the active context) when that span is sampled; else undefined. */
export function sampledTraceId(at: Context = context.active()): string | undefined {
  const spanContext = trace.getSpan(at)?.spanContext();
  if (!spanContext || (spanContext.traceFlags & TraceFlags.SAMPLED) === 0 || !isSpanContextValid(spanContext)) return undefined;
  return spanContext.traceId;
}

/**
 * Where work shared by several callers runs (one statement for many requests: KeyedBatcher,
 * MicroBatcher), given the contexts they submitted it in: in the trace of the first one whose trace
 * is sampled, so that trace shows the statement its work went through; else outside any trace. Not
 * in whichever caller happened to start the shared call (a batcher's drain loop would carry that
 * one trace through every later call, and a sampled caller's trace would miss the call it was in).
 * Outside any trace, the statement's instrumentation (pg's requires a parent span) does no work at
 * all, as for the ~90 % of shared calls no sampled trace is in. For leaf work only: a call made from
 * there to another service would start a new trace.
 */
export function sharedWorkContext(members: Iterable<Context>): Context {
  for (const member of members) if (sampledTraceId(member) !== undefined) return member;
  return ROOT_CONTEXT;
}

/** Flushes the spans still buffered and stops the SDK (bounded); a no-op when tracing is off. Called on shutdown. */
export async function flushTracing(timeoutMs = 2_000): Promise<void> {
  const hook = shutdownHook;
  if (!hook) return;
  shutdownHook = undefined;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([hook().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}
