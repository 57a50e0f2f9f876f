import { describe, expect, it } from 'vitest';
import { loadTracingConfig, serviceNameOf, tracingEnabled } from './tracing-config.js';

describe('tracing configuration (standard OTEL_* variables)', () => {
  it('is off without an endpoint, and with OTEL_SDK_DISABLED=true', () => {
    expect(tracingEnabled(loadTracingConfig({}))).toBe(false);
    expect(tracingEnabled(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }))).toBe(false);
    expect(tracingEnabled(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }))).toBe(true);
    expect(tracingEnabled(loadTracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }))).toBe(true);
    expect(tracingEnabled(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }))).toBe(false);
  });

  it('samples parent-based, 10% of new traces, by default', () => {
    expect(loadTracingConfig({})).toMatchObject({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: 0.1, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' });
  });

  it('fails naming the variable', () => {
    expect(() => loadTracingConfig({ OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(() => loadTracingConfig({ OTEL_TRACES_SAMPLER_ARG: 'half' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(() => loadTracingConfig({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/OTEL_TRACES_SAMPLER/);
    expect(() => loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadTracingConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'udp' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
    for (const bad of ['0', '-5', '1.5', 'many', '1e9']) {
      expect(() => loadTracingConfig({ OTEL_BSP_MAX_QUEUE_SIZE: bad }), bad).toThrow(/OTEL_BSP_MAX_QUEUE_SIZE/);
    }
    expect(() => loadTracingConfig({ OTEL_BSP_SCHEDULE_DELAY: '0' })).toThrow(/OTEL_BSP_SCHEDULE_DELAY/);
  });

  it("passes the batch span processor's bounds through, and leaves them to the SDK's defaults when unset", () => {
    const config = loadTracingConfig({ OTEL_BSP_MAX_QUEUE_SIZE: '4096', OTEL_BSP_SCHEDULE_DELAY: '1000', OTEL_BSP_EXPORT_TIMEOUT: '5000', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '256' });
    expect(config).toMatchObject({ OTEL_BSP_MAX_QUEUE_SIZE: 4096, OTEL_BSP_SCHEDULE_DELAY: 1000, OTEL_BSP_EXPORT_TIMEOUT: 5000, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 256 });
    expect(loadTracingConfig({}).OTEL_BSP_MAX_QUEUE_SIZE).toBeUndefined();
    expect(loadTracingConfig({ OTEL_BSP_MAX_QUEUE_SIZE: ' ' }).OTEL_BSP_MAX_QUEUE_SIZE).toBeUndefined();
  });

  it('names the service after its entry point unless OTEL_SERVICE_NAME is set', () => {
    const config = loadTracingConfig({});
    expect(serviceNameOf(config, '/app/services/tasks/dist/main.js')).toBe('tws-tasks');
    expect(serviceNameOf(config, '/repo/packages/admin-cli/dist/cli.js')).toBe('tws');
    expect(serviceNameOf(loadTracingConfig({ OTEL_SERVICE_NAME: 'tasks-eu' }), '/app/services/tasks/dist/main.js')).toBe('tasks-eu');
  });
});
