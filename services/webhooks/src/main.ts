import { createLogger, createMetricsRegistry, exitOnStartupFailure, serveBackend } from '@tws/common';
import { loadConfig } from './config.js';
import { buildWebhooksRuntime } from './runtime.js';

const logger = createLogger('webhooks');
try {
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  const registry = createMetricsRegistry('webhooks');
  const runtime = buildWebhooksRuntime(config, logger, registry);
  await runtime.start();
  await serveBackend({
    logger,
    registry,
    host: config.HOST,
    grpcPort: config.GRPC_PORT,
    opsPort: config.OPS_PORT,
    grpc: runtime.grpc,
    readiness: runtime.readiness,
    workers: runtime.workers,
    resources: runtime.resources,
  });
} catch (error) {
  exitOnStartupFailure(logger, error);
}
