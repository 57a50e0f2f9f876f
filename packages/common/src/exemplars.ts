import type { Context } from '@opentelemetry/api';
import { Histogram, Registry, type HistogramConfiguration, type LabelValues, type Metric, type OpenMetricsContentType } from 'prom-client';
import { httpServerContextOf } from './http-server-span.js';
import { sampledTraceId, tracingStarted } from './trace-context.js';

/**
 * OpenMetrics exemplars on the request-latency histograms (issue #19): each bucket remembers the
 * `trace_id` of the last SAMPLED request it counted, so a dashboard can jump from a slow bucket to a
 * trace of it. Only when tracing runs in this process (tracing.ts starts the SDK before the service's
 * modules load): otherwise the histograms are plain ones and observing is the plain call.
 *
 * prom-client keeps exemplars only on OpenMetrics registries and a registry has one format, so the
 * service registry stays in the Prometheus text format (the default of /metrics) and a scrape that
 * asks for OpenMetrics (Accept) is written by a throw-away OpenMetrics registry holding the same
 * metrics (`metricsExposition`).
 */

const exemplarHistograms = new WeakSet<Histogram<string>>();
let anyExemplarHistogram = false;

/** The label an exemplar carries: the name Grafana's exemplar trace link reads (`trace_id`). */
export const exemplarTraceIdLabel = 'trace_id';

/**
 * A latency histogram on `registry` that carries `trace_id` exemplars when tracing runs; observe it
 * with `observeLatency` (never `observe`/`startTimer`, whose argument shape differs with exemplars).
 */
export function latencyHistogram<T extends string>(
  registry: Registry,
  configuration: Omit<HistogramConfiguration<T>, 'registers' | 'enableExemplars'>,
  withExemplars: boolean = tracingStarted(),
): Histogram<T> {
  // prom-client refuses an exemplar histogram in a Prometheus-format registry at construction;
  // registered by hand it is served there without exemplars (only OpenMetrics output writes them).
  const histogram = new Histogram<T>({ ...configuration, registers: [], enableExemplars: withExemplars });
  registry.registerMetric(histogram);
  if (withExemplars) {
    exemplarHistograms.add(histogram);
    anyExemplarHistogram = true;
  }
  return histogram;
}

/**
 * Observes `seconds`; on an exemplar histogram, with the trace id of the sampled span in `at`
 * (default: the active context) as the bucket's exemplar. Tracing off: one boolean test and `observe`.
 */
export function observeLatency<T extends string>(histogram: Histogram<T>, labels: LabelValues<T>, seconds: number, at?: Context): void {
  if (!anyExemplarHistogram || !exemplarHistograms.has(histogram)) {
    histogram.observe(labels, seconds);
    return;
  }
  const traceId = sampledTraceId(at);
  // prom-client types exemplar labels as the metric's own label names; they are free-form.
  const exemplarLabels = (traceId === undefined ? {} : { [exemplarTraceIdLabel]: traceId }) as LabelValues<T>;
  histogram.observe({ labels, value: seconds, exemplarLabels });
}

/**
 * `observeLatency` in the trace context of `request`'s HTTP span (http-server-span.ts) (an HTTP edge's
 * onResponse runs in the socket's context, not the request's); looked up only on an exemplar histogram.
 */
export function observeRequestLatency<T extends string>(histogram: Histogram<T>, labels: LabelValues<T>, seconds: number, request: object): void {
  if (!anyExemplarHistogram || !exemplarHistograms.has(histogram)) histogram.observe(labels, seconds);
  else observeLatency(histogram, labels, seconds, httpServerContextOf(request));
}

/** What a scrape may ask for (Accept): Prometheus text (the default) or OpenMetrics 1.0. */
export type ExpositionFormat = 'prometheus' | 'openmetrics';

const maxAcceptLength = 2_048;
const maxAcceptRanges = 32;

/**
 * Content negotiation for /metrics: OpenMetrics when the Accept header ranks an
 * `application/openmetrics-text` range (version 1.0.0, 0.0.1 or none) above every range the text
 * format answers (`text/plain`, `text/*`, `*∕*`); on a tie, no header or anything unparsable, the
 * Prometheus text format. Prometheus sends e.g. `application/openmetrics-text;version=1.0.0;
 * escaping=allow-utf-8;q=0.6,…,text/plain;version=0.0.4;q=0.3,*∕*;q=0.2`. (negotiator's strict
 * parameter matching would refuse that first range for its `escaping` parameter.) Bounded: a header
 * over 2 KiB or its ranges after the 32nd are not read.
 */
export function negotiateExposition(accept: string | string[] | undefined): ExpositionFormat {
  const header = Array.isArray(accept) ? accept.join(',') : accept;
  if (header === undefined || header.length > maxAcceptLength) return 'prometheus';
  let openMetrics = 0;
  let text = 0;
  for (const range of header.split(',', maxAcceptRanges)) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    let q = 1;
    let version: string | undefined;
    for (const parameter of parameters) {
      const [name, value = ''] = parameter.split('=', 2).map((part) => part.trim());
      if (name === 'q') q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : 0;
      else if (name === 'version') version = value;
    }
    if (type === 'application/openmetrics-text' && (version === undefined || version === '1.0.0' || version === '0.0.1')) {
      openMetrics = Math.max(openMetrics, q);
    } else if (type === 'text/plain' || type === 'text/*' || type === '*/*') {
      text = Math.max(text, q);
    }
  }
  return openMetrics > text ? 'openmetrics' : 'prometheus';
}

const defaultLabelsOf = new WeakMap<Registry, Record<string, string>>();

/** Records `registry`'s default labels (createMetricsRegistry) so its OpenMetrics output carries them too. */
export function rememberDefaultLabels(registry: Registry, labels: Record<string, string>): void {
  defaultLabelsOf.set(registry, labels);
}

/**
 * A counter as OpenMetrics names it: the family without `_total` (prom-client appends it to each
 * sample). prom-client renames a counter in place when an OpenMetrics registry writes it, which
 * would drop `_total` from the Prometheus output afterwards; this read-only view keeps it intact.
 */
function openMetricsCounterView(counter: RegisteredMetric): RegisteredMetric {
  const name = counter.name.replace(/_total$/, '');
  return { name, type: 'counter', help: counter.help, get: async () => ({ ...(await counter.get()), name }) };
}

/** What prom-client's registry reads of a metric to write it (its typings call `type` an enum; it is the string). */
interface RegisteredMetric {
  name: string;
  help: string;
  type: string;
  get(): Promise<{ name: string }>;
}

/** The body and content type of a /metrics answer in the format the scrape asked for. */
export async function metricsExposition(registry: Registry, accept: string | string[] | undefined): Promise<{ contentType: string; body: string }> {
  if (negotiateExposition(accept) === 'prometheus') return { contentType: registry.contentType, body: await registry.metrics() };
  const openMetrics = new Registry<OpenMetricsContentType>();
  openMetrics.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  openMetrics.setDefaultLabels(defaultLabelsOf.get(registry) ?? {});
  for (const metric of registry.getMetricsAsArray() as unknown as RegisteredMetric[]) {
    openMetrics.registerMetric((metric.type === 'counter' ? openMetricsCounterView(metric) : metric) as unknown as Metric);
  }
  return { contentType: openMetrics.contentType, body: await openMetrics.metrics() };
}
