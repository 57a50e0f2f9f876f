import { createLogger, createMetricsRegistry, createPool, exitOnStartupFailure, serveBackend } from '@tws/common';
import { loadConfig } from './config.js';
import { createObjectStore } from './storage/object-store.js';

const logger = createLogger('attachments');
try {
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  const registry = createMetricsRegistry('attachments');
  const pool = createPool({
    url: config.DATABASE_URL,
    schema: 'attachments',
    applicationName: 'attachments',
    max: config.DATABASE_POOL_SIZE,
  });
  const store = createObjectStore(config);
  await serveBackend({
    logger,
    registry,
    host: config.HOST,
    grpcPort: config.GRPC_PORT,
    opsPort: config.OPS_PORT,
    grpc: [],
    readiness: [
      { name: 'postgres', check: async () => void (await pool.query('SELECT 1')) },
      {
        name: 'object storage',
        check: async () => {
          if (!(await store.bucketExists(config.S3_BUCKET))) throw new Error(`bucket ${config.S3_BUCKET} is missing`);
        },
      },
    ],
    resources: [{ name: 'postgres pool', run: () => pool.end() }],
  });
} catch (error) {
  exitOnStartupFailure(logger, error);
}
