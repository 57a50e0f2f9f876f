import { Registry, collectDefaultMetrics, Histogram, Counter } from 'prom-client';
import { latencyHistogram, rememberDefaultLabels } from './exemplars.js';

/** A per-service registry with default process metrics and the `service` label on everything. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  rememberDefaultLabels(registry, { service });
  collectDefaultMetrics({ register: registry });
  // prom-client names three gauges with a counter's `_total` suffix, which `promtool check metrics`
  // rejects; the per-type gauges (nodejs_active_handles{type}, …) carry the same information.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    registry.removeSingleMetric(name);
  }
  return registry;
}

export interface GrpcServerMetrics {
  handled: Counter<'grpc_service' | 'grpc_method' | 'grpc_code'>;
  handling: Histogram<'grpc_service' | 'grpc_method' | 'grpc_code'>;
}

export interface GrpcClientMetrics {
  handling: Histogram<'grpc_service' | 'grpc_method' | 'grpc_code'>;
}

const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const serverMetricsOf = new WeakMap<Registry, GrpcServerMetrics>();

/** The server metrics of a registry: one set per registry, whoever asks (every service of a process shares it). */
export function grpcServerMetrics(registry: Registry): GrpcServerMetrics {
  let metrics = serverMetricsOf.get(registry);
  if (!metrics) {
    metrics = createGrpcServerMetrics(registry);
    serverMetricsOf.set(registry, metrics);
  }
  return metrics;
}

function createGrpcServerMetrics(registry: Registry): GrpcServerMetrics {
  return {
    handled: new Counter({
      name: 'grpc_server_handled_total',
      help: 'RPCs completed on the server, by method and status code.',
      labelNames: ['grpc_service', 'grpc_method', 'grpc_code'],
      registers: [registry],
    }),
    // With trace_id exemplars when tracing runs (exemplars.ts): observed with observeLatency.
    handling: latencyHistogram(registry, {
      name: 'grpc_server_handling_seconds',
      help: 'Time to handle an RPC on the server, by method and status code.',
      labelNames: ['grpc_service', 'grpc_method', 'grpc_code'],
      buckets: latencyBuckets,
    }),
  };
}

export function grpcClientMetrics(registry: Registry): GrpcClientMetrics {
  return {
    handling: new Histogram({
      name: 'grpc_client_handling_seconds',
      help: 'Time from sending an RPC to receiving its status, by method and status code.',
      labelNames: ['grpc_service', 'grpc_method', 'grpc_code'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
  };
}

/**
 * `http_request_duration_seconds` {method, route (the template), status_code}: the RED histogram of an
 * HTTP edge, with trace_id exemplars when tracing runs (exemplars.ts): observed with observeLatency.
 */
export function httpRequestDurationMetric(registry: Registry): Histogram<'method' | 'route' | 'status_code'> {
  return latencyHistogram(registry, {
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: latencyBuckets,
  });
}
