import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { describe, expect, it } from 'vitest';
import { loadTracingConfig } from './tracing-config.js';
import { exporterOf, samplerOf } from './tracing-sdk.js';

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
