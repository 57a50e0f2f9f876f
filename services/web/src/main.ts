import closeWithGrace from 'close-with-grace';
import { createLogger, flushTracing, createMetricsRegistry, exitOnStartupFailure, registerBuildInfo, startOpsServer } from '@tws/common';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';

const logger = createLogger('web');
try {
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  const registry = createMetricsRegistry('web');
  registerBuildInfo(registry, { revision: config.GIT_REVISION });
  const app = await buildApp({ config, logger, registry });
  // /healthz, /readyz (its own Postgres) and /metrics on OPS_PORT, never on the public port.
  const ops = await startOpsServer({ host: config.HOST, port: config.OPS_PORT, registry, readiness: app.readiness, logger });
  closeWithGrace({ delay: 25_000 }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'closing after an uncaught error');
    else logger.info({ signal }, 'shutting down: finishing in-flight requests');
    ops.markShuttingDown();
    await app.close();
    await ops.close();
    await flushTracing();
  });
  await app.listen({ host: config.HOST, port: config.PORT });
} catch (error) {
  exitOnStartupFailure(logger, error);
}
