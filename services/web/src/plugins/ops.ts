import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Histogram } from 'prom-client';
import { observeRequestLatency, type ReadinessCheck } from '@tws/common';

declare module 'fastify' {
  interface FastifyInstance {
    /** What /readyz on OPS_PORT checks: the service's own Postgres (main.ts serves it). */
    readiness: ReadinessCheck[];
  }
}

/**
 * The HTTP RED histogram of every route (route template, never the URL). Probes and /metrics are
 * served on OPS_PORT by @tws/common's ops server (main.ts), never on the public port.
 */
async function opsPlugin(
  app: FastifyInstance,
  options: { readiness: ReadinessCheck[]; httpRequestDuration: Histogram<'method' | 'route' | 'status_code'> },
): Promise<void> {
  app.decorate('readiness', options.readiness);
  app.addHook('onResponse', async (request, reply) => {
    observeRequestLatency(
      options.httpRequestDuration,
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
      request,
    );
  });
}

export default fp(opsPlugin, { name: 'ops' });
