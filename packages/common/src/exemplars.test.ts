import { ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { Counter } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { latencyHistogram, metricsExposition, negotiateExposition, observeLatency } from './exemplars.js';
import { createMetricsRegistry } from './metrics.js';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const contextWith = (flags: number) => trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: '00f067aa0ba902b7', traceFlags: flags });

describe('negotiateExposition', () => {
  it.each([
    // Prometheus 2's default scrape protocols.
    ['application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1', 'openmetrics'],
    // Prometheus 3's, with the escaping parameter.
    [
      'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
      'openmetrics',
    ],
    ['application/openmetrics-text', 'openmetrics'],
    ['Application/OpenMetrics-Text; Version=1.0.0', 'openmetrics'],
    // Prometheus configured text-first, curl, browsers, nothing.
    ['text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5', 'prometheus'],
    ['*/*', 'prometheus'],
    ['text/html,application/xhtml+xml,*/*;q=0.8', 'prometheus'],
    [undefined, 'prometheus'],
    ['', 'prometheus'],
    // A tie goes to the default; q=0 means "not this"; a version we do not write is not OpenMetrics.
    ['text/plain, application/openmetrics-text', 'prometheus'],
    ['application/openmetrics-text;q=0', 'prometheus'],
    ['application/openmetrics-text;version=2.0.0', 'prometheus'],
    ['application/openmetrics-text;q=banana', 'prometheus'],
  ] as const)('%s → %s', (accept, expected) => {
    expect(negotiateExposition(accept)).toBe(expected);
  });

  it('reads no more than 2 KiB of header and 32 ranges', () => {
    expect(negotiateExposition(`${'x/y,'.repeat(600)}application/openmetrics-text`)).toBe('prometheus');
    expect(negotiateExposition(`${'x/y,'.repeat(40)}application/openmetrics-text`)).toBe('prometheus');
    expect(negotiateExposition(`${'x/y,'.repeat(20)}application/openmetrics-text`)).toBe('openmetrics');
  });
});

describe('latency histograms with trace_id exemplars', () => {
  const openMetricsAccept = 'application/openmetrics-text;version=1.0.0';

  function setUp(withExemplars: boolean) {
    const registry = createMetricsRegistry('exemplar-test');
    const histogram = latencyHistogram(registry, { name: 'test_duration_seconds', help: 'Test.', labelNames: ['route'], buckets: [0.1, 1] }, withExemplars);
    const counter = new Counter({ name: 'test_requests_total', help: 'Test requests.', registers: [registry] });
    return { registry, histogram, counter };
  }

  it("writes the sampled span's trace id on the observed bucket, only in OpenMetrics", async () => {
    const { registry, histogram, counter } = setUp(true);
    observeLatency(histogram, { route: '/a' }, 0.5, contextWith(TraceFlags.SAMPLED));
    counter.inc();

    const openMetrics = await metricsExposition(registry, openMetricsAccept);
    expect(openMetrics.contentType).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
    expect(openMetrics.body.endsWith('# EOF\n')).toBe(true);
    const exemplarLine = openMetrics.body.split('\n').find((line) => line.includes('# {'));
    expect(exemplarLine).toMatch(
      new RegExp(`^test_duration_seconds_bucket\\{le="1",service="exemplar-test",route="/a"\\} 1 # \\{trace_id="${traceId}"\\} 0\\.5 \\d+(\\.\\d+)?$`),
    );
    expect(openMetrics.body).toContain('# TYPE test_requests counter\ntest_requests_total{service="exemplar-test"} 1');

    // The Prometheus text format, after an OpenMetrics scrape: no exemplar, the counter keeps `_total`.
    const text = await metricsExposition(registry, undefined);
    expect(text.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text.body).not.toContain('trace_id');
    expect(text.body).toContain('# TYPE test_requests_total counter\ntest_requests_total{service="exemplar-test"} 1');
    expect(text.body).toContain('test_duration_seconds_bucket{le="1",service="exemplar-test",route="/a"} 1\n');
  });

  it('keeps no exemplar for an unsampled span or no span', async () => {
    const { registry, histogram } = setUp(true);
    observeLatency(histogram, { route: '/a' }, 0.05, contextWith(TraceFlags.NONE));
    observeLatency(histogram, { route: '/a' }, 0.5);
    const { body } = await metricsExposition(registry, openMetricsAccept);
    expect(body).toContain('test_duration_seconds_count{service="exemplar-test",route="/a"} 2');
    expect(body).not.toContain('trace_id');
  });

  it('tracing off: a plain histogram, OpenMetrics without exemplars', async () => {
    const { registry, histogram } = setUp(false);
    observeLatency(histogram, { route: '/a' }, 0.5, contextWith(TraceFlags.SAMPLED));
    const { body } = await metricsExposition(registry, openMetricsAccept);
    expect(body).toContain('test_duration_seconds_bucket{le="1",service="exemplar-test",route="/a"} 1\n');
    expect(body).not.toContain('trace_id');
  });
});
