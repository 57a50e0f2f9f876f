import closeWithGrace from 'close-with-grace';
import { createLogger, flushTracing, createMetricsRegistry, exitOnStartupFailure, registerBuildInfo } from '@tws/common';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';

const logger = createLogger('gateway');
try {
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  const registry = createMetricsRegistry('gateway');
  registerBuildInfo(registry, { revision: config.GIT_REVISION });
  const app = await buildApp({ config, logger, registry });
  closeWithGrace({ delay: 25_000 }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'closing after an uncaught error');
    else logger.info({ signal }, 'shutting down: finishing in-flight requests');
    app.markShuttingDown();
    await app.close();
    await flushTracing();
  });
  await app.listen({ host: config.HOST, port: config.PORT });
} catch (error) {
  exitOnStartupFailure(logger, error);
}
