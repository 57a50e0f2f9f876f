import {
  createPool,
  grpcServerMetrics,
  kafkaSecurity,
  postgresReadiness,
  type BackendApp,
  type Logger,
} from '@tws/common';
import { taskEventsTopic } from '@tws/contracts';
import type { Registry } from 'prom-client';
import { buildGrpcServices } from './api/grpc-services.js';
import type { TasksConfig } from './config.js';
import { createOutboxMetrics } from './metrics.js';
import { kafkaPublisher } from './store/kafka-publisher.js';
import { OutboxRelay } from './workers/outbox-relay.js';

/** The composition root of the tasks service: main.ts runs it with runBackend. */
export function buildApp(config: TasksConfig, logger: Logger, registry: Registry): BackendApp {
  const pool = createPool({ url: config.DATABASE_URL, schema: 'tasks', applicationName: 'tasks', max: config.DATABASE_POOL_SIZE });
  const relayLogger = logger.child({ component: 'outbox-relay' });
  const relay = new OutboxRelay({
    databaseUrl: config.DATABASE_URL,
    schema: 'tasks',
    publisher: kafkaPublisher({
      brokers: config.KAFKA_BROKERS,
      clientId: config.KAFKA_CLIENT_ID,
      logger,
      security: kafkaSecurity(config),
    }),
    topic: taskEventsTopic,
    logger: relayLogger,
    metrics: createOutboxMetrics(registry, pool, relayLogger),
    batchSize: config.OUTBOX_BATCH_SIZE,
    pollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS,
    lingerMs: config.OUTBOX_LINGER_MS,
    standbyRetryMs: config.OUTBOX_STANDBY_RETRY_MS,
    maxBackoffMs: config.OUTBOX_MAX_BACKOFF_MS,
    retentionMs: config.OUTBOX_RETENTION_MS,
  });
  return {
    grpc: buildGrpcServices({ pool, logger, metrics: grpcServerMetrics(registry) }),
    // Kafka is not a readiness dependency: the API keeps working while it is down (events wait).
    readiness: [postgresReadiness(pool)],
    async start() {
      relay.start();
    },
    workers: [{ name: 'outbox relay', run: () => relay.stop() }],
    resources: [{ name: 'postgres pool', run: () => pool.end() }],
  };
}
