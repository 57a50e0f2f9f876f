/**
 * The OpenTelemetry trace SDK as this project starts it: the pieces `@opentelemetry/sdk-node`
 * assembles for traces (AsyncLocalStorage context, W3C trace-context and baggage propagation, the
 * tracer provider, the instrumentations), without the rest of what sdk-node loads at import: every
 * logs, metrics and traces exporter for every protocol, Zipkin, Prometheus and B3: its imports
 * alone took 41 MB of RSS, these 27 MB (`bench/HISTORY.md`, session 10).
 *
 * Used by `tracing.ts` (the `--import` entry) and by the tests, so both start the same SDK.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations, type Instrumentation } from '@opentelemetry/instrumentation';
import type { Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
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
}

/** Registers the context manager, the propagator, the tracer provider and the instrumentations globally; returns the shutdown (flushes the span processors). */
export function startTraceSdk(options: TraceSdkOptions): () => Promise<void> {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  const provider = new TracerProvider({
    spanProcessors: options.spanProcessors,
    ...(options.resource ? { resource: options.resource } : {}),
    ...(options.sampler ? { sampler: options.sampler } : {}),
  });
  trace.setGlobalTracerProvider(provider);
  const unregister = registerInstrumentations({ tracerProvider: provider, instrumentations: options.instrumentations ?? [] });
  return async () => {
    unregister();
    await provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
  };
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
