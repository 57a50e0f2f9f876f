import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Histogram, Registry } from 'prom-client';
import { metricsExposition, observeRequestLatency, runReadiness } from '@tws/common';

declare module 'fastify' {
  interface FastifyInstance {
    /** Set at the start of shutdown so /readyz turns red before the listener closes. */
    markShuttingDown(): void;
  }
}

export interface OpsOptions {
  /** What /metrics serves. */
  registry: Registry;
  /** Observed for every request (metrics.ts). */
  httpRequestDuration: Histogram<'method' | 'route' | 'status_code'>;
}

/** /healthz, /readyz, /metrics and the HTTP RED histogram for every route. */
async function opsPlugin(app: FastifyInstance, options: OpsOptions): Promise<void> {
  let shuttingDown = false;
  app.decorate('markShuttingDown', () => {
    shuttingDown = true;
  });
  const duration = options.httpRequestDuration;
  // A callback hook, as the other per-request hooks: an async one costs a promise and a microtask per request.
  app.addHook('onResponse', (request, reply, done) => {
    // The request's trace context (saved by the request-id hooks): its sampled trace is the bucket's exemplar.
    observeRequestLatency(
      duration,
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
      request,
    );
    done();
  });

  // Probes and scrapes: public, never rate-limited, not in the OpenAPI document.
  const hidden = { schema: { hide: true }, config: { auth: false, rateLimit: false } } as const;
  app.get('/healthz', hidden, async () => ({ status: 'ok' }));
  // Ready = this replica can serve its own work, which needs no dependency: a request for a backend
  // that is down answers 503 {"error"} by itself, every other route keeps working. Requiring the
  // backends here would cascade (in Kubernetes a backend whose pods all left its Service, e.g. the
  // webhooks service once waiting on Kafka, would take every gateway pod out and the whole API
  // down). Their state is reported alongside, for operators. Only shutting down makes it red.
  app.get('/readyz', hidden, async (_request, reply) => {
    if (shuttingDown) return reply.code(503).send({ status: 'shutting down' });
    const report = await runReadiness(app.backendChecks);
    return reply.code(200).send({ status: 'ok', backends: report.checks });
  });
  // Prometheus text by default; OpenMetrics (with trace_id exemplars) when the scrape's Accept asks for it.
  app.get('/metrics', hidden, async (request, reply) => {
    const exposition = await metricsExposition(options.registry, request.headers.accept);
    return reply.type(exposition.contentType).send(exposition.body);
  });
}

export default fp(opsPlugin, { name: 'ops', dependencies: ['backends'] });
