import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from '@tws/common';
import type { Registry } from 'prom-client';
import type { Backends } from './clients/backends.js';
import { createTasksApi } from './clients/tasks.js';
import { TaskReader } from './clients/task-reader.js';
import { TaskListReader } from './clients/task-list-reader.js';
import { createAttachmentsApi } from './clients/attachments.js';
import { createWebhooksApi } from './clients/webhooks.js';
import attachmentContentRoute from './api/attachments/content.js';
import type { GatewayConfig } from './config.js';
import authPlugin from './plugins/auth.js';
import errorsPlugin, { clientErrorHandler, frameworkErrors } from './plugins/errors.js';
import openApiPlugin from './plugins/openapi.js';
import opsPlugin from './plugins/ops.js';
import rateLimitPlugin from './plugins/rate-limit.js';
import { validatorCompiler } from './plugins/validation.js';
import v1Routes from './api/index.js';

export interface AppDependencies {
  config: GatewayConfig;
  logger: Logger;
  registry: Registry;
  backends: Backends;
}

/** Builds the gateway without listening, so tests and main.ts share one construction. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>;

export async function buildApp(deps: AppDependencies): Promise<App> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY,
    // Per-request lines are off: http_request_duration_seconds covers traffic; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    // fastify's built-in 503 while closing carries framework fields ({error, message, statusCode});
    // requests that still arrive on open connections during the drain are served instead, with
    // `Connection: close`, while /readyz already reports shutting down.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors fastify and node raise before routing answer {"error"} too, without echoing the URL.
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorate('tasksApi', createTasksApi(deps.backends.tasks, config.GRPC_DEADLINE_MS));
  app.decorate('taskReader', new TaskReader(app.tasksApi));
  app.decorate('taskListReader', new TaskListReader(app.tasksApi));
  app.decorate('attachmentsApi', createAttachmentsApi(deps.backends.attachments, config.GRPC_DEADLINE_MS));
  app.decorate('webhooksApi', createWebhooksApi(deps.backends.webhooks, config.GRPC_DEADLINE_MS));

  await app.register(errorsPlugin);
  await app.register(rateLimitPlugin, { config });
  await app.register(openApiPlugin);
  await app.register(authPlugin, { config, tasks: app.tasksApi });
  await app.register(opsPlugin, { registry: deps.registry, backends: deps.backends.health });
  await app.register(v1Routes, { prefix: '/v1', publicBaseUrl: config.PUBLIC_BASE_URL });
  // Capability download URLs carry their own unguessable token: outside the authenticated subtree.
  await app.register(attachmentContentRoute, { prefix: '/v1' });
  app.addHook('onClose', async () => deps.backends.close());
  return app;
}
