import { createLogger, createMetricsRegistry, exitOnStartupFailure, serveBackend } from '@tws/common';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';

const logger = createLogger('attachments');
try {
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  const registry = createMetricsRegistry('attachments');
  const app = buildApp(config, logger, registry);
  await serveBackend({
    logger,
    registry,
    host: config.HOST,
    grpcPort: config.GRPC_PORT,
    opsPort: config.OPS_PORT,
    grpc: app.grpc,
    readiness: app.readiness,
    workers: app.workers,
    resources: app.resources,
  });
  await app.start();
} catch (error) {
  exitOnStartupFailure(logger, error);
}
