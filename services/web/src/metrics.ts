import { Counter, type Histogram, type Registry } from 'prom-client';
import { grpcClientMetrics, httpRequestDurationMetric, type GrpcClientMetrics } from '@tws/common';

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
    httpRequestDuration: httpRequestDurationMetric(registry),
    signIns: new Counter({
      name: 'web_sign_ins_total',
      help: 'Sign-in attempts that reached an outcome: signed_in, no_workspace, email_not_verified, refused, expired, provider_unavailable.',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}
