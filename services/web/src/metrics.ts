import { Counter, Histogram, type Registry } from 'prom-client';
import { grpcClientMetrics, type GrpcClientMetrics } from '@tws/common';

export interface WebMetrics {
  /** Calls to the tasks service (clients/tasks.ts). */
  grpcClient: GrpcClientMetrics;
  /** The HTTP RED histogram of every route (plugins/ops.ts), named and bucketed like the gateway's. */
  httpRequestDuration: Histogram<'method' | 'route' | 'status_code'>;
  /** Finished sign-in attempts by outcome (domain/sign-in.ts). */
  signIns: Counter<'outcome'>;
}

export function webMetrics(registry: Registry): WebMetrics {
  return {
    grpcClient: grpcClientMetrics(registry),
    httpRequestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route template and status code.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    signIns: new Counter({
      name: 'web_sign_ins_total',
      help: 'Sign-in attempts that reached an outcome: signed_in, no_workspace, email_not_verified, refused, expired, provider_unavailable.',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}
