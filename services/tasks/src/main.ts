import { createLogger, createMetricsRegistry, createPool, exitOnStartupFailure, serveBackend } from '@tws/common';
import { loadConfig } from './config.js';

const logger = createLogger('tasks');
try {
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  const registry = createMetricsRegistry('tasks');
  const pool = createPool({ url: config.DATABASE_URL, schema: 'tasks', applicationName: 'tasks', max: config.DATABASE_POOL_SIZE });
  await serveBackend({
    logger,
    registry,
    host: config.HOST,
    grpcPort: config.GRPC_PORT,
    opsPort: config.OPS_PORT,
    grpc: [],
    readiness: [{ name: 'postgres', check: async () => void (await pool.query('SELECT 1')) }],
    resources: [{ name: 'postgres pool', run: () => pool.end() }],
  });
} catch (error) {
  exitOnStartupFailure(logger, error);
}
