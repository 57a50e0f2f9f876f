import {
  auditRetention,
  auditServiceRegistration,
  createKafka,
  createPool,
  grpcServerMetrics,
  kafkaProduceMetrics, kafkaReachableGauge,
  kafkaSecurity,
  postgresReadiness,
  type BackendApp,
  type Logger,
} from '@tws/common';
import { redeliveryTopic, retryTopics, taskEventsTopic, webhookConsumerGroups as consumerGroups } from '@tws/contracts';
import { Partitioners } from 'kafkajs';
import { loadAuditProto } from '@tws/proto-types';
import type { Registry } from 'prom-client';
import { webhooksService } from './api/webhooks-service.js';
import { HostVetter } from './clients/host-vetting.js';
import { WebhookSender } from './clients/sender.js';
import type { WebhooksConfig } from './config.js';
import { EndpointHealth } from './domain/delivery/endpoint-health.js';
import { DeliveryPipeline } from './domain/delivery/pipeline.js';
import { createWebhookMetrics } from './metrics.js';
import { BacklogStore } from './store/backlog.js';
import { DeliveryStore } from './store/deliveries.js';
import { EndpointStore } from './store/endpoints.js';
import { FanOutStore } from './store/fanouts.js';
import { HandoffProducer } from './store/handoff-producer.js';
import { RetentionStore } from './store/retention.js';
import { SecretBox } from './store/secret-box.js';
import { BacklogDrainer } from './workers/backlog-drainer.js';
import { ScheduledAttemptHandler, TaskEventHandler } from './workers/consumer/handlers.js';
import { TrackedConsumer } from './workers/consumer/runner.js';
import { DeletedEndpoints } from './workers/deleted-endpoints.js';
import { endpointUpkeep } from './workers/endpoint-upkeep.js';
import { FanOutExpander } from './workers/fanout-expander.js';
import { deliveryLogRetention } from './workers/retention.js';


/**
 * The composition root: wires store/, clients/, domain/, api/ and workers/ from the configuration.
 * main.ts runs it with runBackend; nothing here listens or traps signals.
 */
export function buildApp(config: WebhooksConfig, logger: Logger, registry: Registry): BackendApp {
  // Attempts are logged by primary key in batches of up to 200 rows. With the default cost of a random
  // page (4: spinning disks) the planner scanned `deliveries` sequentially up to ~25,000 rows (and
  // misjudged the `state = 'pending'` filter); its recent pages are in memory, so probes are cheap.
  const pool = createPool({
    url: config.DATABASE_URL,
    schema: 'webhooks',
    applicationName: 'webhooks',
    max: config.DATABASE_POOL_SIZE,
    settings: { random_page_cost: '1.1' },
    metrics: { registry },
  });
  const kafka = createKafka({ clientId: config.KAFKA_CLIENT_ID, brokers: config.KAFKA_BROKERS, logger, ...kafkaSecurity(config) });
  const admin = kafka.admin();
  // Keys are delivery ids: any partition spreads them; the default (murmur2) partitioner, chosen explicitly.
  const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  const handoff = new HandoffProducer(producer, 2, kafkaProduceMetrics(registry));
  const metrics = createWebhookMetrics(registry);
  const secrets = new SecretBox(config.WEBHOOK_SECRET_ENCRYPTION_KEY);
  const vetter = new HostVetter({
    allowList: config.WEBHOOK_ALLOWED_CIDRS,
    dnsServers: config.WEBHOOK_DNS_SERVERS,
    maxCacheTtlSeconds: config.WEBHOOK_DNS_CACHE_MAX_TTL_SECONDS,
  });
  const sender = new WebhookSender({
    vetter,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    bodyLimitBytes: config.WEBHOOK_RESPONSE_BODY_LIMIT_BYTES,
    connectionsPerTarget: config.WEBHOOK_ENDPOINT_CONCURRENCY,
    extraCa: config.WEBHOOK_EXTRA_CA_FILE,
  });
  const endpoints = new EndpointStore(pool);
  const deliveries = new DeliveryStore(pool, config.WEBHOOK_FANOUT_BATCH_SIZE);
  const backlog = new BacklogStore(pool);
  const deleted = new DeletedEndpoints({ endpoints, logger });
  const shutdown = new AbortController();
  const health = new EndpointHealth({
    store: endpoints,
    disableAfterSeconds: config.WEBHOOK_AUTO_DISABLE_AFTER_SECONDS,
    autoDisabled: metrics.autoDisabled,
    logger,
  });
  const upkeep = endpointUpkeep({ endpoints, health, logger });
  const pipeline = new DeliveryPipeline({
    store: deliveries,
    sender,
    secrets,
    producer: handoff,
    metrics,
    logger,
    retryDelaysMs: config.WEBHOOK_RETRY_DELAYS,
    concurrency: config.WEBHOOK_DELIVERY_CONCURRENCY,
    workspaceConcurrency: config.WEBHOOK_WORKSPACE_CONCURRENCY,
    endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
    endpointQueueLimit: config.WEBHOOK_ENDPOINT_QUEUE_LIMIT,
    endpointMaxQueueWaitMs: config.WEBHOOK_ENDPOINT_MAX_QUEUE_WAIT_MS,
    backlog,
    isDeleted: (endpointId) => deleted.has(endpointId),
    onOutcome: (endpointId, ok) => health.observe(endpointId, ok),
    signal: shutdown.signal,
  });
  const drainer = new BacklogDrainer({ backlog, store: deliveries, pipeline, logger, maxPending: config.WEBHOOK_MAX_PENDING_DELIVERIES });
  const expander = new FanOutExpander({
    store: new FanOutStore(pool),
    pipeline,
    logger: logger.child({ worker: 'fan-out' }),
    batchSize: config.WEBHOOK_FANOUT_BATCH_SIZE,
    maxInFlight: config.WEBHOOK_FANOUT_MAX_IN_FLIGHT,
    maxPending: config.WEBHOOK_MAX_PENDING_DELIVERIES,
    signal: shutdown.signal,
  });
  const handlerDeps = {
    store: deliveries,
    pipeline,
    metrics,
    logger,
    maxPending: config.WEBHOOK_MAX_PENDING_DELIVERIES,
    signal: shutdown.signal,
    onQueued: () => expander.kick(),
  };
  const eventsConsumer = new TrackedConsumer({
    kafka,
    groupId: consumerGroups.events,
    topics: [taskEventsTopic],
    handler: new TaskEventHandler(handlerDeps),
    logger: logger.child({ consumer: consumerGroups.events }),
    metrics,
    // Under load the broker holds a fetch until 32 KiB are there (or 25 ms passed): a few fetches a
    // second of many messages each instead of one per message, for both this process and the broker.
    fetchMinBytes: 32 * 1024,
    fetchMaxWaitMs: 25,
    // Idle, that would be 40 empty fetches a second (~0.045 core between a replica and the broker):
    // after an empty one, the next waits up to 500 ms for its first byte, answered as a record arrives.
    fetchIdleWaitMs: 500,
  });
  const scheduledConsumer = new TrackedConsumer({
    kafka,
    groupId: consumerGroups.scheduled,
    topics: [...retryTopics, redeliveryTopic],
    handler: new ScheduledAttemptHandler(handlerDeps),
    logger: logger.child({ consumer: consumerGroups.scheduled }),
    metrics,
    partitionsConsumedConcurrently: 10,
    // Each empty fetch costs the broker and this process ~0.7 ms of CPU; at the default 100 ms the
    // idle delay topics took ~0.02 core between them. A new retry or redelivery waits at most this
    // long before it is fetched (retries are minutes apart by default).
    fetchMaxWaitMs: 500,
  });
  const retention = deliveryLogRetention({ store: new RetentionStore(pool), retentionDays: config.WEBHOOK_LOG_RETENTION_DAYS, logger });
  const audit = auditRetention({ pool, retentionDays: config.AUDIT_RETENTION_DAYS, intervalMs: config.AUDIT_SWEEP_INTERVAL_MS, logger: logger.child({ component: 'audit' }) });
  // In-flight attempts get their full time-out plus time to record and hand off.
  const drainMs = config.WEBHOOK_TIMEOUT_MS + 3_000;

  // Ready = the gRPC API (registration, delivery log, redelivery bookkeeping) can be served, which
  // needs Postgres only. Kafka is not a readiness dependency: the consumers reconnect by themselves
  // and catch up, and an unready webhooks pod would leave its Service (then the gateway's webhook
  // routes, not just deliveries, would fail). Its state is the kafka_reachable gauge.
  kafkaReachableGauge(registry, admin);

  return {
    grpc: [
      webhooksService({ endpoints, deliveries, vetter, secrets, producer: handoff, metrics, registry, logger, onDeleted: (id) => deleted.add(id) }),
      auditServiceRegistration(loadAuditProto().audit.v1.AuditService.service, { pool, logger, metrics: grpcServerMetrics(registry) }),
    ],
    readiness: [postgresReadiness(pool)],
    async start() {
      await producer.connect();
      await deleted.poll();
      deleted.start();
      drainer.start();
      expander.start();
      await eventsConsumer.start();
      await scheduledConsumer.start();
      retention.start();
      audit.start();
      upkeep.start();
    },
    workers: [
      {
        name: 'stop consumers, the backlog drainer and the fan-out expander (finish in-flight deliveries, commit)',
        run: async () => {
          await Promise.all([eventsConsumer.stop(drainMs), scheduledConsumer.stop(drainMs), drainer.stop(drainMs), expander.stop(drainMs)]);
          shutdown.abort();
          await deleted.stop();
        },
      },
      { name: 'delivery log retention', run: () => retention.stop() },
      { name: 'audit retention', run: () => audit.stop() },
      { name: 'endpoint health and secret upkeep', run: () => upkeep.stop() },
      { name: 'kafka producer', run: () => producer.disconnect() },
      { name: 'webhook connection pools', run: () => sender.close() },
    ],
    resources: [
      { name: 'kafka admin', run: () => admin.disconnect() },
      { name: 'postgres pool', run: () => pool.end() },
    ],
  };
}
