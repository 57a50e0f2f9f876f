import { createLogger, createMetricsRegistry, kafkaSecurity, createPool, exitOnStartupFailure, grpcServerMetrics, serveBackend } from '@tws/common';
import { loadConfig } from './config.js';
import { taskEventsTopic } from '@tws/contracts';
import { kafkaPublisher } from './outbox/publisher.js';
import { OutboxRelay } from './outbox/relay.js';
import { buildGrpcServices } from './server.js';

const logger = createLogger('tasks');
try {
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  const registry = createMetricsRegistry('tasks');
  const pool = createPool({ url: config.DATABASE_URL, schema: 'tasks', applicationName: 'tasks', max: config.DATABASE_POOL_SIZE });
  const relay = new OutboxRelay({
    databaseUrl: config.DATABASE_URL,
    schema: 'tasks',
    pool,
    publisher: kafkaPublisher({
      brokers: config.KAFKA_BROKERS,
      clientId: config.KAFKA_CLIENT_ID,
      logger,
      security: kafkaSecurity(config),
    }),
    topic: taskEventsTopic,
    logger: logger.child({ component: 'outbox-relay' }),
    registry,
    batchSize: config.OUTBOX_BATCH_SIZE,
    pollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS,
    lingerMs: config.OUTBOX_LINGER_MS,
    standbyRetryMs: config.OUTBOX_STANDBY_RETRY_MS,
    maxBackoffMs: config.OUTBOX_MAX_BACKOFF_MS,
    retentionMs: config.OUTBOX_RETENTION_MS,
  });
  await serveBackend({
    logger,
    registry,
    host: config.HOST,
    grpcPort: config.GRPC_PORT,
    opsPort: config.OPS_PORT,
    grpc: buildGrpcServices({ pool, logger, metrics: grpcServerMetrics(registry) }),
    // Kafka is not a readiness dependency: the API keeps working while it is down (events wait).
    readiness: [{ name: 'postgres', check: async () => void (await pool.query('SELECT 1')) }],
    workers: [{ name: 'outbox relay', run: () => relay.stop() }],
    resources: [{ name: 'postgres pool', run: () => pool.end() }],
  });
  relay.start();
} catch (error) {
  exitOnStartupFailure(logger, error);
}
