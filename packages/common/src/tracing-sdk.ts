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
import { TracerProvider, type Sampler, type SpanProcessor } from '@opentelemetry/sdk-trace';

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
