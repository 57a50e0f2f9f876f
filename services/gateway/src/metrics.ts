import { Histogram, type Registry } from 'prom-client';
import { grpcClientMetrics, type GrpcClientMetrics } from '@tws/common';

export interface GatewayMetrics {
  /** Calls to the backends, by service, method and status (clients/backends.ts). */
  grpcClient: GrpcClientMetrics;
  /** The HTTP RED histogram of every route (plugins/ops.ts). */
  httpRequestDuration: Histogram<'method' | 'route' | 'status_code'>;
}

export function gatewayMetrics(registry: Registry): GatewayMetrics {
  return {
    grpcClient: grpcClientMetrics(registry),
    httpRequestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route template and status code.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}
