/**
 * The OpenTelemetry trace SDK as this project starts it: the pieces `@opentelemetry/sdk-node`
 * assembles for traces (AsyncLocalStorage context, W3C trace-context and baggage propagation, the
 * tracer provider, the instrumentations), without the rest of what sdk-node loads at import: every
 * logs, metrics and traces exporter for every protocol, Zipkin, Prometheus and B3: its imports
 * alone took 41 MB of RSS, these 27 MB (`bench/HISTORY.md`, session 10).
 *
 * Used by `tracing.ts` (the `--import` entry) and by the tests, so both start the same SDK.
 */
import {
  context,
  isSpanContextValid,
  propagation,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
  type TracerOptions,
  type TracerProvider as ApiTracerProvider,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, isTracingSuppressed, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations, type Instrumentation } from '@opentelemetry/instrumentation';
import type { Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  RandomIdGenerator,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type IdGenerator,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import type { TracingConfig } from './tracing-config.js';

export interface TraceSdkOptions {
  spanProcessors: SpanProcessor[];
  resource?: Resource | undefined;
  sampler?: Sampler | undefined;
  instrumentations?: Instrumentation[] | undefined;
  /**
   * The sampler never records a child of an unsampled parent (every `parentbased_*` sampler, the
   * default): such children are then not built at all (`UnsampledChildren`). Leave it off for a
   * sampler that decides on its own under any parent.
   */
  unsampledParentsDecide?: boolean | undefined;
  /**
   * The ratio of the root sampler of a parent-based sampler that decides on the trace id alone
   * (`parentbased_traceidratio`): a new trace it drops is then not built by the SDK either
   * (`UnsampledChildren`). Needs `unsampledParentsDecide`.
   */
  newTraceRatio?: number | undefined;
}

/**
 * The SDK's ids (random, as its default generator draws them), except that a trace id drawn and
 * sampled before the SDK starts the root span (`UnsampledChildren`) is handed to it once: the SDK's
 * sampler then decides on the same trace id, the same way.
 */
class PresetTraceIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private preset: string | undefined;

  /** The trace id the next `generateTraceId` answers. */
  presetTraceId(traceId: string): void {
    this.preset = traceId;
  }

  generateTraceId(): string {
    const preset = this.preset;
    if (preset === undefined) return this.random.generateTraceId();
    this.preset = undefined;
    return preset;
  }

  generateSpanId(): string {
    return this.random.generateSpanId();
  }
}

const word = (): number => (Math.random() * 2 ** 32) >>> 0;
const hexOfByte = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
const hexOfWord = (value: number): string => hexOfByte[value >>> 24]! + hexOfByte[(value >>> 16) & 255]! + hexOfByte[(value >>> 8) & 255]! + hexOfByte[value & 255]!;

/**
 * The span context of a new trace, with ids drawn as the SDK's `RandomIdGenerator` draws them
 * (Math.random, 32 bits at a time, never all zero) but kept as numbers and written in hex only when
 * first read. A request whose new trace is dropped mostly never reads them: it writes no log line
 * and passes its context to no call. Drawing and writing them through a Buffer, then parsing the hex
 * again for the ratio, cost ~0.8 µs a request. The ids are getters: a copy by spread would lose them
 * (nothing here copies a local span context; the one spread in `UnsampledChildren` is of a remote one).
 */
class NewTraceContext implements SpanContext {
  readonly traceFlags: number = TraceFlags.NONE;
  // The trace id's four 32-bit words, then the span id's two (fields, not an array: one object a request).
  private readonly t0 = word();
  private readonly t1 = word();
  private readonly t2 = word();
  private readonly t3: number;
  private readonly s0 = word();
  private readonly s1: number;
  private hexTraceId: string | undefined;
  private hexSpanId: string | undefined;

  constructor() {
    const t3 = word();
    const s1 = word();
    this.t3 = (this.t0 | this.t1 | this.t2 | t3) === 0 ? 1 : t3;
    this.s1 = (this.s0 | s1) === 0 ? 1 : s1;
  }

  /** What `TraceIdRatioBasedSampler` compares with its bound: the XOR of the trace id's four words. */
  ratioHash(): number {
    return (this.t0 ^ this.t1 ^ this.t2 ^ this.t3) >>> 0;
  }

  get traceId(): string {
    return (this.hexTraceId ??= hexOfWord(this.t0) + hexOfWord(this.t1) + hexOfWord(this.t2) + hexOfWord(this.t3));
  }

  get spanId(): string {
    return (this.hexSpanId ??= hexOfWord(this.s0) + hexOfWord(this.s1));
  }
}

/**
 * How `UnsampledChildren` decides new traces: `TraceIdRatioBasedSampler`'s rule (a trace is kept when
 * its hash is below ratio × 2³²−1) on the drawn ids, and the SDK's ids to hand a kept trace id to.
 */
interface NewTraces {
  bound: number;
  ids: PresetTraceIds;
}

/**
 * A tracer whose child of an unsampled parent is the parent's own context (as a local one), in a
 * non-recording span: no span id drawn, no attributes sanitized, no sampler asked, no span counted.
 * With a parent-based sampler the SDK's answer would be a non-recording span too, under its own new
 * span id: what it propagates (trace id, flags 00) is the same, so nothing downstream decides
 * differently. Most spans of a service are such children at the default 10 % sampling (every gRPC
 * server span, SQL statement and Kafka record of an unsampled request); the SDK spent ~1.2–1.6 µs
 * on each.
 *
 * With `newTraces` (a parent-based ratio sampler) the same holds for a new trace that sampler drops
 * (~90 % of requests at the default sampling): its trace id is drawn and sampled here, and the
 * span is a non-recording one under that trace id and a new span id, as the SDK's would be, without
 * its attribute cleaning, span counters and parent checks. A trace id the sampler keeps is handed to
 * the SDK (`PresetTraceIds`), whose sampler keeps it too: the ratio is of the trace id alone.
 */
class UnsampledChildren implements Tracer {
  constructor(
    private readonly tracer: Tracer,
    private readonly newTraces: NewTraces | undefined,
  ) {}

  startSpan(name: string, options?: SpanOptions, parent: Context = context.active()): Span {
    const parentContext = options?.root === true ? undefined : trace.getSpanContext(parent);
    if (parentContext !== undefined && isSpanContextValid(parentContext)) {
      if ((parentContext.traceFlags & TraceFlags.SAMPLED) === 0 && !isTracingSuppressed(parent)) {
        return trace.wrapSpanContext(parentContext.isRemote === true ? { ...parentContext, isRemote: false } : parentContext);
      }
    } else if (this.newTraces !== undefined && !isTracingSuppressed(parent)) {
      const root = new NewTraceContext();
      if (root.ratioHash() >= this.newTraces.bound) return trace.wrapSpanContext(root);
      this.newTraces.ids.presetTraceId(root.traceId);
    }
    return this.tracer.startSpan(name, options, parent);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, parent: Context, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    const options = rest.length > 1 ? (rest[0] as SpanOptions) : undefined;
    const parent = rest.length > 2 ? (rest[1] as Context) : context.active();
    const span = this.startSpan(name, options, parent);
    return context.with(trace.setSpan(parent, span), fn as (span: Span) => ReturnType<F>, undefined, span);
  }
}

/** The provider's tracers, each wrapped once in `UnsampledChildren`. */
function unsampledChildrenOf(provider: ApiTracerProvider, newTraces: NewTraces | undefined): ApiTracerProvider {
  const tracers = new Map<string, Tracer>();
  return {
    getTracer(name: string, version?: string, options?: TracerOptions): Tracer {
      const key = `${name}@${version ?? ''}:${options?.schemaUrl ?? ''}`;
      let tracer = tracers.get(key);
      if (tracer === undefined) tracers.set(key, (tracer = new UnsampledChildren(provider.getTracer(name, version, options), newTraces)));
      return tracer;
    },
  };
}

/** Registers the context manager, the propagator, the tracer provider and the instrumentations globally; returns the shutdown (flushes the span processors). */
export function startTraceSdk(options: TraceSdkOptions): () => Promise<void> {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  const ids = new PresetTraceIds();
  const provider = new TracerProvider({
    spanProcessors: options.spanProcessors,
    idGenerator: ids,
    ...(options.resource ? { resource: options.resource } : {}),
    ...(options.sampler ? { sampler: options.sampler } : {}),
  });
  const ratio = options.newTraceRatio;
  // TraceIdRatioBasedSampler's bound, from a ratio it would clamp to [0, 1].
  const newTraces = ratio === undefined ? undefined : { bound: Math.floor(Math.min(Math.max(ratio, 0), 1) * 0xffffffff), ids };
  const tracers = options.unsampledParentsDecide ? unsampledChildrenOf(provider, newTraces) : provider;
  trace.setGlobalTracerProvider(tracers);
  const unregister = registerInstrumentations({ tracerProvider: tracers, instrumentations: options.instrumentations ?? [] });
  return async () => {
    unregister();
    await provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
  };
}

/** Whether the sampler OTEL_TRACES_SAMPLER names leaves a child of an unsampled parent unsampled (the `parentbased_*` ones). */
export function unsampledParentsDecide(config: TracingConfig): boolean {
  return config.OTEL_TRACES_SAMPLER.startsWith('parentbased_');
}

/** The ratio of new traces `parentbased_traceidratio` (the default) keeps, deciding on the trace id alone; undefined for the other samplers. */
export function newTraceRatioOf(config: TracingConfig): number | undefined {
  return config.OTEL_TRACES_SAMPLER === 'parentbased_traceidratio' ? config.OTEL_TRACES_SAMPLER_ARG : undefined;
}

/** The sampler OTEL_TRACES_SAMPLER names, with OTEL_TRACES_SAMPLER_ARG as the ratio. */
export function samplerOf(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLER_ARG);
  switch (config.OTEL_TRACES_SAMPLER) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

/** The OTLP exporter of OTEL_EXPORTER_OTLP_PROTOCOL, the only one imported; it reads its endpoint, headers, timeout and compression from the standard variables itself. */
export async function exporterOf(config: TracingConfig): Promise<SpanExporter> {
  switch (config.OTEL_EXPORTER_OTLP_PROTOCOL) {
    case 'grpc':
      return new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter();
    case 'http/json':
      return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
    case 'http/protobuf':
      return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
  }
}

/** The batch span processor over that exporter, bounded by OTEL_BSP_* (the SDK's defaults where unset). */
export async function spanProcessorOf(config: TracingConfig): Promise<SpanProcessor> {
  return new BatchSpanProcessor({
    exporter: await exporterOf(config),
    maxQueueSize: config.OTEL_BSP_MAX_QUEUE_SIZE,
    scheduledDelayMillis: config.OTEL_BSP_SCHEDULE_DELAY,
    exportTimeoutMillis: config.OTEL_BSP_EXPORT_TIMEOUT,
    maxExportBatchSize: config.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
  });
}
