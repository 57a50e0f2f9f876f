import { z } from 'zod';
import { auditEnv, backendEnv, checkKafkaSasl, ConfigError, env, kafkaConnectionEnv, parseConfig } from '@tws/common';

/** The only place the tasks service reads its environment. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env) {
  const config = parseConfig(
    {
      ...backendEnv({ grpcPort: 50051, opsPort: 9101, databasePoolSize: 20 }),
      KAFKA_CLIENT_ID: env.text('tasks'),
      ...kafkaConnectionEnv,
      /** Outbox rows published per Kafka request. */
      OUTBOX_BATCH_SIZE: env.count(200),
      /** Polling fallback of the relay when no LISTEN/NOTIFY wake-up arrives. */
      OUTBOX_POLL_INTERVAL_MS: env.count(2_000),
      /** After a LISTEN/NOTIFY wake-up, how long the relay waits for more rows (they share a Kafka request). */
      OUTBOX_LINGER_MS: env.durationMs(5),
      /** How often a standby replica tries to take over the relay. */
      OUTBOX_STANDBY_RETRY_MS: env.count(2_000),
      /** Longest wait between retries while Kafka (or Postgres) is unavailable. */
      OUTBOX_MAX_BACKOFF_MS: env.count(10_000),
      /** Published outbox rows are deleted after this long (default one day). */
      OUTBOX_RETENTION_MS: env.count(24 * 60 * 60 * 1000),
      /**
       * Heartbeat of the gateways' revocation streams (and round trip of the LISTEN session behind
       * them). A gateway that hears nothing for 3 intervals stops trusting its auth caches; a gateway
       * that does not acknowledge a revocation within 5 intervals is cut off.
       */
      REVOCATION_HEARTBEAT_MS: z.coerce.number().int().min(100).max(30_000).default(1_000),
      /** Gateway revocation streams one replica serves at most (each gateway replica holds one). */
      REVOCATION_MAX_WATCHERS: z.coerce.number().int().min(1).max(10_000).default(256),
      /** How long the answer to a POST sent with an Idempotency-Key is kept and replayed (default 24 h). */
      IDEMPOTENCY_KEY_TTL_MS: z.coerce.number().int().min(1_000).max(30 * 24 * 60 * 60 * 1000).default(24 * 60 * 60 * 1000),
      /** A claimed key without an answer for this long is abandoned (its gateway crashed): the same request may run again. */
      IDEMPOTENCY_LOCK_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(60 * 60 * 1000).default(60_000),
      /** How often expired Idempotency-Key rows are deleted; 0 = never (they still count as absent). */
      IDEMPOTENCY_SWEEP_INTERVAL_MS: env.durationMs(60_000),
      /** AUDIT_RETENTION_DAYS (default 90) and AUDIT_SWEEP_INTERVAL_MS of the audit trail. */
      ...auditEnv,
      /**
       * Large task lists (StreamTasks) one replica streams at once; each holds a database connection
       * for its read, so it must stay below DATABASE_POOL_SIZE. More wait up to 5 s for their turn, then UNAVAILABLE (a 503).
       */
      TASK_LIST_MAX_STREAMS: z.coerce.number().int().min(1).max(1_000).default(10),
      /** Longest life of one task list stream (its snapshot transaction): a reader slower than that is cut off. */
      TASK_LIST_STREAM_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(60 * 60 * 1000).default(120_000),
    },
    source,
  );
  checkKafkaSasl(config);
  if (config.TASK_LIST_MAX_STREAMS >= config.DATABASE_POOL_SIZE) {
    throw new ConfigError('Invalid configuration: TASK_LIST_MAX_STREAMS: must be below DATABASE_POOL_SIZE (each stream holds a connection)');
  }
  return config;
}

export type TasksConfig = ReturnType<typeof loadConfig>;
