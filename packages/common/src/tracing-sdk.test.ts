import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { context, isSpanContextValid, ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import {
  AlwaysOnSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  SamplingDecision,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { projectTracer, traceparentOf } from './trace-context.js';
import { loadTracingConfig } from './tracing-config.js';
import { exporterOf, newTraceRatioOf, samplerOf, startTraceSdk, unsampledParentsDecide } from './tracing-sdk.js';

describe('the trace SDK as tracing.ts starts it', () => {
  it('samples as OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG say (default: parent-based, 10 % of new traces)', () => {
    expect(samplerOf(loadTracingConfig({})).toString()).toBe(
      'ParentBased{root=TraceIdRatioBased{0.1}, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}',
    );
    const named = (sampler: string, arg = '0.25') => samplerOf(loadTracingConfig({ OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: arg })).toString();
    expect(named('always_on')).toBe('AlwaysOnSampler');
    expect(named('always_off')).toBe('AlwaysOffSampler');
    expect(named('traceidratio')).toBe('TraceIdRatioBased{0.25}');
    expect(named('parentbased_always_on')).toMatch(/^ParentBased\{root=AlwaysOnSampler,/);
    expect(named('parentbased_always_off')).toMatch(/^ParentBased\{root=AlwaysOffSampler,/);
    expect(named('parentbased_traceidratio')).toMatch(/^ParentBased\{root=TraceIdRatioBased\{0.25\},/);
  });

  it('exports over the OTLP protocol OTEL_EXPORTER_OTLP_PROTOCOL names (default http/protobuf)', async () => {
    const exporters = await Promise.all(
      [{}, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }].map((environment) => exporterOf(loadTracingConfig(environment))),
    );
    expect(exporters[0]).toBeInstanceOf(ProtobufExporter);
    expect(exporters[1]).toBeInstanceOf(JsonExporter);
    expect(exporters[2]).toBeInstanceOf(GrpcExporter);
    await Promise.all(exporters.map((exporter) => exporter.shutdown()));
  });
});

describe('children of an unsampled parent (parent-based samplers)', () => {
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const parentId = 'b7ad6b7169203331';
  const remoteParent = (flags: number) => trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: parentId, traceFlags: flags, isRemote: true });

  async function withSdk<T>(
    unsampledParentsDecide: boolean,
    work: () => T,
    sampler: Sampler = new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    newTraceRatio?: number,
  ): Promise<{ result: T; exported: ReadableSpan[] }> {
    const exporter = new InMemorySpanExporter();
    const processor = new SimpleSpanProcessor({ exporter });
    const stop = startTraceSdk({ spanProcessors: [processor], sampler, unsampledParentsDecide, newTraceRatio });
    try {
      const result = work();
      await processor.forceFlush();
      return { result, exported: exporter.getFinishedSpans() };
    } finally {
      await stop();
    }
  }

  it('are the parent context in a non-recording span: same trace, flags 00, nothing exported', async () => {
    const { result: span, exported } = await withSdk(true, () => {
      const span = projectTracer().startSpan('child', { kind: SpanKind.CLIENT, attributes: { 'db.operation.name': 'SELECT' } }, remoteParent(0));
      span.end();
      return span;
    });
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext()).toEqual({ traceId, spanId: parentId, traceFlags: 0, isRemote: false });
    expect(traceparentOf(span)).toBe(`00-${traceId}-${parentId}-00`);
    expect(exported).toEqual([]);
  });

  it('leaves sampled parents, new roots and suppressed contexts to the SDK', async () => {
    const { result, exported } = await withSdk(true, () => {
      const sampled = projectTracer().startSpan('sampled child', {}, remoteParent(TraceFlags.SAMPLED));
      const root = projectTracer().startSpan('new root', { root: true }, remoteParent(0));
      const suppressed = projectTracer().startSpan('suppressed', {}, suppressTracing(remoteParent(0)));
      const recording = [sampled, root, suppressed].map((span) => span.isRecording());
      for (const span of [sampled, root, suppressed]) span.end();
      return { sampled, root, suppressed, recording };
    });
    expect(result.recording).toEqual([true, true, false]);
    expect(result.sampled.spanContext().spanId).not.toBe(parentId);
    expect(result.root.spanContext().traceId).not.toBe(traceId);
    expect(isSpanContextValid(result.suppressed.spanContext())).toBe(false);
    expect(exported.map((span) => [span.name, span.parentSpanContext?.spanId])).toEqual([
      ['sampled child', parentId],
      ['new root', undefined],
    ]);
  });

  it('runs startActiveSpan in that context, with every argument shape', async () => {
    const { result } = await withSdk(true, () =>
      context.with(remoteParent(0), () => [
        projectTracer().startActiveSpan('a', (span) => [span.isRecording(), trace.getActiveSpan() === span]),
        projectTracer().startActiveSpan('b', { kind: SpanKind.INTERNAL }, (span) => [span.isRecording(), trace.getActiveSpan() === span]),
        projectTracer().startActiveSpan('c', {}, remoteParent(TraceFlags.SAMPLED), (span) => {
          const seen = [span.isRecording(), trace.getActiveSpan() === span];
          span.end();
          return seen;
        }),
      ]),
    );
    expect(result).toEqual([
      [false, true],
      [false, true],
      [true, true],
    ]);
  });

  it('is off for a sampler that decides under any parent: then the SDK samples the child itself', async () => {
    const { exported } = await withSdk(false, () => projectTracer().startSpan('child', {}, remoteParent(0)).end(), samplerOf(loadTracingConfig({ OTEL_TRACES_SAMPLER: 'always_on' })));
    expect(exported.map((span) => span.parentSpanContext?.spanId)).toEqual([parentId]);
    expect([unsampledParentsDecide(loadTracingConfig({})), unsampledParentsDecide(loadTracingConfig({ OTEL_TRACES_SAMPLER: 'traceidratio' }))]).toEqual([true, false]);
  });

  it('new traces the parent-based ratio drops are not built by the SDK; the ones it keeps are, under the trace id it kept', async () => {
    const ratio = new TraceIdRatioBasedSampler(0.5);
    let sdkRootDecisions = 0;
    // The SDK's sampler, counting the new traces it is asked about.
    const sdkSampler: Sampler = {
      shouldSample: (...args) => {
        if (trace.getSpanContext(args[0]) === undefined) sdkRootDecisions += 1;
        return new ParentBasedSampler({ root: ratio }).shouldSample(...args);
      },
      toString: () => 'counting',
    };
    const { result: spans, exported } = await withSdk(
      true,
      () =>
        Array.from({ length: 400 }, (_, i) => {
          const span = i % 2 === 0 ? projectTracer().startSpan(`root ${i}`, { kind: SpanKind.SERVER }) : projectTracer().startSpan(`root ${i}`, { root: true }, remoteParent(0));
          const recording = span.isRecording();
          span.end();
          return { span, recording };
        }),
      sdkSampler,
      0.5,
    );
    const kept = spans.filter((root) => root.recording).map((root) => root.span);
    const dropped = spans.filter((root) => !root.recording).map((root) => root.span);
    // Each decision is the ratio's on the span's own trace id, as the SDK's would be.
    for (const { span, recording } of spans) {
      expect(recording).toBe(ratio.shouldSample(ROOT_CONTEXT, span.spanContext().traceId).decision === SamplingDecision.RECORD_AND_SAMPLED);
    }
    expect(kept.length).toBeGreaterThan(100);
    expect(dropped.length).toBeGreaterThan(100);
    // The SDK was asked about the kept ones only, and exported each of them.
    expect(sdkRootDecisions).toBe(kept.length);
    expect(exported.map((span) => span.name).sort()).toEqual(kept.map((span) => (span as unknown as ReadableSpan).name).sort());
    // A dropped root: valid new ids (never the remote parent's trace), flags 00.
    for (const span of dropped) {
      expect(span.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(span.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(traceparentOf(span)).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-00`);
      expect(isSpanContextValid(span.spanContext())).toBe(true);
      expect(span.spanContext().traceFlags).toBe(TraceFlags.NONE);
      expect(span.spanContext().traceId).not.toBe(traceId);
    }
    expect(new Set(spans.map((root) => root.span.spanContext().traceId)).size).toBe(spans.length);
  });

  it('keeps no new trace at ratio 0 and every one at ratio 1', async () => {
    const recording = async (ratio: number) =>
      (
        await withSdk(
          true,
          () => Array.from({ length: 50 }, () => projectTracer().startSpan('root', { kind: SpanKind.SERVER }).isRecording()),
          new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
          ratio,
        )
      ).result;
    expect(new Set(await recording(0))).toEqual(new Set([false]));
    expect(new Set(await recording(1))).toEqual(new Set([true]));
  });

  it('is on for the default sampler only (parent-based ratio)', () => {
    expect(newTraceRatioOf(loadTracingConfig({}))).toBe(0.1);
    expect(newTraceRatioOf(loadTracingConfig({ OTEL_TRACES_SAMPLER_ARG: '0.25' }))).toBe(0.25);
    for (const sampler of ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off']) {
      expect(newTraceRatioOf(loadTracingConfig({ OTEL_TRACES_SAMPLER: sampler }))).toBeUndefined();
    }
  });
});
