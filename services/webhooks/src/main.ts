import { createKafka, createLogger, createMetricsRegistry, createPool, exitOnStartupFailure, serveBackend } from '@tws/common';
import { loadConfig } from './config.js';

const logger = createLogger('webhooks');
try {
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  const registry = createMetricsRegistry('webhooks');
  const pool = createPool({ url: config.DATABASE_URL, schema: 'webhooks', applicationName: 'webhooks', max: config.DATABASE_POOL_SIZE });
  const kafkaAdmin = createKafka({ clientId: config.KAFKA_CLIENT_ID, brokers: config.KAFKA_BROKERS, logger }).admin();
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
        name: 'kafka',
        check: async () => {
          await kafkaAdmin.connect();
          await kafkaAdmin.describeCluster();
        },
      },
    ],
    resources: [
      { name: 'kafka admin', run: () => kafkaAdmin.disconnect() },
      { name: 'postgres pool', run: () => pool.end() },
    ],
  });
} catch (error) {
  exitOnStartupFailure(logger, error);
}
