import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { fastifyRequestIdOptions, requestIdLogField, type Logger } from '@tws/common';
import type { Registry } from 'prom-client';
import api from './api/index.js';
import mcpRoutes from './api/mcp/index.js';
import type { GatewayConfig } from './config.js';
import { gatewayMetrics } from './metrics.js';
import accessLogPlugin from './plugins/access-log.js';
import authPlugin from './plugins/auth.js';
import backendsPlugin from './plugins/backends.js';
import requestIdPlugin from './plugins/request-id.js';
import errorsPlugin, { clientErrorHandler, frameworkErrors } from './plugins/errors.js';
import idempotencyPlugin from './plugins/idempotency.js';
import openApiPlugin from './plugins/openapi.js';
import opsPlugin from './plugins/ops.js';
import rateLimitPlugin from './plugins/rate-limit.js';
import rateLimitSyncPlugin from './plugins/rate-limit-sync.js';
import revocationsPlugin from './plugins/revocations.js';
import { validatorCompiler } from './plugins/validation.js';

export interface AppDependencies {
  config: GatewayConfig;
  logger: Logger;
  /** Where the gateway's metrics are registered; /metrics serves it. */
  registry: Registry;
}

export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>;

/** Builds the gateway without listening, so tests and main.ts share one construction. */
export async function buildApp(deps: AppDependencies): Promise<App> {
  const { config } = deps;
  const metrics = gatewayMetrics(deps.registry);
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY,
    // fastify's own per-request lines are off: plugins/access-log.ts writes one `access` line per sampled,
    // failed (5xx) or slow request, with the route template and the credential kind.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: requestIdLogField }),
    // fastify's built-in 503 while closing carries framework fields ({error, message, statusCode});
    // requests that still arrive on open connections during the drain are served instead, with
    // `Connection: close`, while /readyz already reports shutting down.
    return503OnClosing: false,
    // X-Request-Id: the client's when sane, else a new UUID (docs/api.md "Request ids").
    ...fastifyRequestIdOptions,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors fastify and node raise before routing answer {"error"} too, without echoing the URL.
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // Cross-cutting plugins first: rate-limit and auth read each route's policy (`config.rateLimit`,
  // `config.auth`) in onRoute hooks, which see only the routes added after them.
  await app.register(requestIdPlugin);
  await app.register(errorsPlugin);
  await app.register(rateLimitPlugin, { config });
  await app.register(backendsPlugin, { config, metrics: metrics.grpcClient, taskListStreamReads: metrics.taskListStreamReads });
  await app.register(rateLimitSyncPlugin, { config, metrics: metrics.rateLimitSync, logger: deps.logger });
  await app.register(openApiPlugin);
  await app.register(revocationsPlugin, { metrics: metrics.revocations });
  await app.register(authPlugin, { config });
  await app.register(accessLogPlugin, { config });
  // After auth: its preHandler reads request.principal; adds its hooks to the POST routes below.
  await app.register(idempotencyPlugin);
  await app.register(opsPlugin, { registry: deps.registry, httpRequestDuration: metrics.httpRequestDuration });
  await app.register(api, { prefix: '/v1', publicBaseUrl: config.PUBLIC_BASE_URL });
  // The MCP server at /mcp and its protected-resource metadata: every tool call is a /v1 call (api/mcp/rest.ts).
  await app.register(mcpRoutes, { config, metrics: metrics.mcp });
  return app;
}
