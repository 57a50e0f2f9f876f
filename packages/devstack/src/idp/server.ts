import http from 'node:http';
import { createLogger } from '@tws/common/logger';
import { installShutdown } from '@tws/common/shutdown';
import { loadIdpConfig } from './config.js';
import { interactionRoutes } from './interactions.js';
import { pageCsp } from './pages.js';
import { buildProvider, DevUsers, redirectOrigins } from './provider.js';

/** Bounds of the provider's HTTP server (bodies are bounded by oidc-provider: 56 KiB, the login form: 4 KiB). */
export const idpServerLimits = { headersTimeoutMs: 5_000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000, maxHeaderSize: 16 * 1024 };

/**
 * The local OpenID Connect provider as a process (dist/idp/server.js): reads IDP_CONFIG_FILE,
 * listens on its issuer's loopback port, prints one "listening" line, stops on SIGTERM.
 */
function main(): void {
  const logger = createLogger('idp');
  const config = loadIdpConfig();
  const users = new DevUsers(config.users);
  const provider = buildProvider(config, users);
  provider.use(interactionRoutes(provider, users, pageCsp(redirectOrigins(config))));
  provider.on('server_error', (_ctx, error) => logger.error({ err: error }, 'provider error'));
  provider.on('authorization.error', (_ctx, error) => logger.info({ error: error.error, description: error.error_description }, 'authorization refused'));
  provider.on('grant.error', (_ctx, error) => logger.info({ error: error.error, description: error.error_description }, 'token request refused'));
  provider.on('grant.success', (ctx) => logger.info({ client: ctx.oidc.client?.clientId }, 'tokens issued'));

  const server = http.createServer(
    { requestTimeout: idpServerLimits.requestTimeoutMs, headersTimeout: idpServerLimits.headersTimeoutMs, maxHeaderSize: idpServerLimits.maxHeaderSize },
    provider.callback(),
  );
  server.keepAliveTimeout = idpServerLimits.keepAliveTimeoutMs;
  server.listen(config.port, config.host, () => {
    logger.info({ issuer: config.issuer, users: config.users.map((user) => user.email) }, 'identity provider listening');
  });
  installShutdown(logger, [
    {
      name: 'http server',
      run: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    },
  ], 5_000);
}

main();
