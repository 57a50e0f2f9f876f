import formbody from '@fastify/formbody';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { createPool, fastifyRequestIdOptions, postgresReadiness, requestIdLogField, type Logger } from '@tws/common';
import type { Registry } from 'prom-client';
import api from './api/index.js';
import type { WebConfig } from './config.js';
import { SecretKeys } from './domain/secrets.js';
import { webMetrics } from './metrics.js';
import backendsPlugin from './plugins/backends.js';
import csrfPlugin from './plugins/csrf.js';
import requestIdPlugin from './plugins/request-id.js';
import errorsPlugin, { clientErrorHandler, frameworkErrors } from './plugins/errors.js';
import oauthPlugin from './plugins/oauth.js';
import opsPlugin from './plugins/ops.js';
import rateLimitPlugin from './plugins/rate-limit.js';
import securityHeadersPlugin from './plugins/security-headers.js';
import sessionPlugin from './plugins/session.js';
import signInPlugin from './plugins/sign-in.js';
import { sessionSweeper } from './workers/session-sweeper.js';

export interface AppDependencies {
  config: WebConfig;
  logger: Logger;
  /** Where the service's metrics are registered; OPS_PORT's /metrics serves it. */
  registry: Registry;
}

export type App = FastifyInstance;

/** Builds the web service without listening, so tests and main.ts share one construction. */
export async function buildApp(deps: AppDependencies): Promise<App> {
  const { config, logger } = deps;
  const metrics = webMetrics(deps.registry);
  const keys = new SecretKeys(config.SESSION_SECRET);
  const pool = createPool({ url: config.DATABASE_URL, schema: 'web', applicationName: 'web', max: config.DATABASE_POOL_SIZE, acquireTimeoutMs: 5_000, metrics: { registry: deps.registry } });
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY,
    // Per-request lines are off: http_request_duration_seconds covers traffic; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: requestIdLogField }),
    return503OnClosing: false,
    // X-Request-Id: the client's when sane, else a new UUID (docs/api.md "Request ids").
    ...fastifyRequestIdOptions,
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors,
    clientErrorHandler,
  });
  app.setValidatorCompiler(validatorCompiler);
  // Forms only: application/x-www-form-urlencoded (415 for anything else that has a body).
  app.removeAllContentTypeParsers();
  await app.register(formbody, { bodyLimit: config.BODY_LIMIT_BYTES });

  // Cross-cutting plugins before the routes: their hooks and onRoute policies apply to routes added after them.
  await app.register(requestIdPlugin);
  await app.register(errorsPlugin);
  await app.register(opsPlugin, { readiness: [postgresReadiness(pool)], httpRequestDuration: metrics.httpRequestDuration });
  await app.register(securityHeadersPlugin, { secure: config.APP_SECURE });
  await app.register(rateLimitPlugin, { perMinute: config.SIGN_IN_RATE_LIMIT_PER_MINUTE, registrationsPerMinute: config.OAUTH_REGISTRATION_RATE_LIMIT_PER_MINUTE });
  await app.register(csrfPlugin, { appUrl: config.APP_URL, keys });
  await app.register(sessionPlugin, { config, pool, keys });
  await app.register(backendsPlugin, {
    target: config.TASKS_GRPC_TARGET,
    webhooksTarget: config.WEBHOOKS_GRPC_TARGET,
    deadlineMs: config.GRPC_DEADLINE_MS,
    revokeDeadlineMs: config.REVOKE_DEADLINE_MS,
    attachmentsTarget: config.ATTACHMENTS_GRPC_TARGET,
    apiPublicBaseUrl: config.API_PUBLIC_BASE_URL,
    metrics: metrics.grpcClient,
  });
  await app.register(signInPlugin, { config, keys, logger, outcomes: metrics.signIns });
  await app.register(oauthPlugin, { config, pool, logger: logger.child({ component: 'oauth' }), httpRequestDuration: metrics.httpRequestDuration });
  await app.register(api, { appUrl: config.APP_URL });

  const sweeper = sessionSweeper(app.sessions, app.connectedApps, config.SESSION_SWEEP_INTERVAL_MS, logger.child({ component: 'session-sweeper' }), app.grantRevocations);
  app.addHook('onReady', async () => sweeper.start());
  app.addHook('onClose', async () => {
    await sweeper.stop();
    await pool.end();
  });
  return app;
}
