import {
  auditRetention,
  createPool,
  grpcServerMetrics,
  kafkaProduceMetrics,
  kafkaSecurity,
  postgresReadiness,
  type BackendApp,
  type Logger,
  type Pool,
} from '@tws/common';
import { taskEventsTopic } from '@tws/contracts';
import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import { buildGrpcServices } from './api/grpc-services.js';
import type { TasksConfig } from './config.js';
import { RevocationHub } from './domain/revocation-hub.js';
import { RevocationPublisher } from './domain/revocation-publisher.js';
import { createOutboxMetrics, createRevocationMetrics } from './metrics.js';
import { kafkaPublisher } from './store/kafka-publisher.js';
import { announceAck } from './store/revocations.js';
import { idempotencySweeper } from './workers/idempotency-sweeper.js';
import { OutboxRelay } from './workers/outbox-relay.js';
import { RevocationListener } from './workers/revocation-listener.js';

/**
 * The revocation feed of this replica: its LISTEN session, the gateways' streams it holds and the
 * revoking side's wait for acknowledgements (README "Revocation").
 */
function revocationFeed(config: TasksConfig, logger: Logger, registry: Registry, pool: Pool) {
  const replicaId = randomUUID();
  const log = logger.child({ component: 'revocations' });
  const metrics = createRevocationMetrics(registry);
  const heartbeatMs = config.REVOCATION_HEARTBEAT_MS;
  // A gateway gives its stream up after 3 silent intervals; waiting 5 for an acknowledgement means a
  // watcher cut off for being late has also stopped trusting its caches by itself.
  const ackTimeoutMs = 5 * heartbeatMs;
  const publisher = new RevocationPublisher({ confirmTimeoutMs: ackTimeoutMs + 1_000, logger: log, metrics: metrics.publisher });
  const hub = new RevocationHub({
    replicaId,
    heartbeatIntervalMs: heartbeatMs,
    ackTimeoutMs,
    maxWatchers: config.REVOCATION_MAX_WATCHERS,
    maxUnacked: 64,
    logger: log,
    metrics: metrics.hub,
    onReplicaAcked(id) {
      publisher.acknowledged({ id, replica: replicaId });
      announceAck(pool, { id, replica: replicaId }).catch((error: unknown) => log.warn({ err: error, revocationId: id }, 'could not announce a revocation acknowledgement'));
    },
  });
  const listener = new RevocationListener({
    databaseUrl: config.DATABASE_URL,
    replicaId,
    heartbeatIntervalMs: heartbeatMs,
    logger: log,
    sink: {
      up: () => hub.listenerUp(),
      down: (reason) => hub.listenerDown(reason),
      heartbeat: () => hub.heartbeat(),
      revocation: (notice) => hub.deliver(notice),
      ack: (ack) => publisher.acknowledged(ack),
    },
  });
  return { hub, publisher, listener };
}

/** The composition root of the tasks service: main.ts runs it with runBackend. */
export function buildApp(config: TasksConfig, logger: Logger, registry: Registry): BackendApp {
  const pool = createPool({ url: config.DATABASE_URL, schema: 'tasks', applicationName: 'tasks', max: config.DATABASE_POOL_SIZE, metrics: { registry } });
  const relayLogger = logger.child({ component: 'outbox-relay' });
  const relay = new OutboxRelay({
    databaseUrl: config.DATABASE_URL,
    schema: 'tasks',
    publisher: kafkaPublisher({
      brokers: config.KAFKA_BROKERS,
      clientId: config.KAFKA_CLIENT_ID,
      logger,
      security: kafkaSecurity(config),
      metrics: kafkaProduceMetrics(registry),
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
  const revocations = revocationFeed(config, logger, registry, pool);
  const sweeper = idempotencySweeper({ pool, intervalMs: config.IDEMPOTENCY_SWEEP_INTERVAL_MS, logger: logger.child({ component: 'idempotency' }) });
  const audit = auditRetention({ pool, retentionDays: config.AUDIT_RETENTION_DAYS, intervalMs: config.AUDIT_SWEEP_INTERVAL_MS, logger: logger.child({ component: 'audit' }) });
  return {
    grpc: buildGrpcServices({
      pool,
      logger,
      metrics: grpcServerMetrics(registry),
      revocations: revocations.publisher,
      revocationHub: revocations.hub,
      idempotency: { ttlMs: config.IDEMPOTENCY_KEY_TTL_MS, lockTimeoutMs: config.IDEMPOTENCY_LOCK_TIMEOUT_MS },
      taskLists: { maxStreams: config.TASK_LIST_MAX_STREAMS, timeoutMs: config.TASK_LIST_STREAM_TIMEOUT_MS },
    }),
    // Kafka is not a readiness dependency: the API keeps working while it is down (events wait).
    readiness: [postgresReadiness(pool)],
    async start() {
      relay.start();
      revocations.listener.start();
      sweeper.start();
      audit.start();
    },
    // Streams never finish by themselves: end them first, so the gRPC drain does not wait for them.
    draining: [{ name: 'revocation streams', run: async () => revocations.hub.closeAll('this tasks replica is shutting down; reconnect') }],
    workers: [
      { name: 'outbox relay', run: () => relay.stop() },
      { name: 'revocation listener', run: () => revocations.listener.stop() },
      { name: 'idempotency key sweep', run: () => sweeper.stop() },
      { name: 'audit retention', run: () => audit.stop() },
    ],
    resources: [{ name: 'postgres pool', run: () => pool.end() }],
  };
}
