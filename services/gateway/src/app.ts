import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from '@tws/common';
import type { Registry } from 'prom-client';
import type { Backends } from './clients/backends.js';
import type { GatewayConfig } from './config.js';
import errorsPlugin from './plugins/errors.js';
import opsPlugin from './plugins/ops.js';

export interface AppDependencies {
  config: GatewayConfig;
  logger: Logger;
  registry: Registry;
  backends: Backends;
}

/** Builds the gateway without listening, so tests and main.ts share one construction. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>;

export async function buildApp(deps: AppDependencies): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: deps.config.BODY_LIMIT_BYTES,
    trustProxy: deps.config.TRUST_PROXY,
    disableRequestLogging: true,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  await app.register(errorsPlugin);
  await app.register(opsPlugin, { registry: deps.registry, readiness: deps.backends.readiness });
  app.addHook('onClose', async () => deps.backends.close());
  return app;
}
