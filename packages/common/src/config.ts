import { z } from 'zod';
import type { TopicDurability } from './kafka.js';

/** Raised when environment configuration is invalid; the message names every bad variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Parses environment variables with a zod object schema, once, at start-up.
 * Fails fast with a message such as `DATABASE_URL: Invalid URL`.
 */
export function parseConfig<Shape extends z.ZodRawShape>(
  shape: Shape,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<z.ZodObject<Shape>> {
  const result = z.object(shape).safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const variable = issue.path.join('.') || '(environment)';
    const detail = issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
    return `${variable}: ${detail}`;
  });
  throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
}

/** Unset and blank both mean "not configured". */
const optionalText = () =>
  z
    .string()
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? undefined : value));

/** Reusable environment variable parsers. */
export const env = {
  host: (fallback = '0.0.0.0') => z.string().min(1).default(fallback),
  text: (fallback?: string) => (fallback === undefined ? z.string().min(1) : z.string().min(1).default(fallback)),
  count: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  url: () => z.url(),
  /** Comma-separated list, blanks dropped. */
  list: () =>
    z
      .string()
      .transform((value) => value.split(',').map((item) => item.trim()).filter((item) => item.length > 0)),
  bool: (fallback: boolean) => z.stringbool().default(fallback),
  optionalText,
  saslMechanism: () =>
    optionalText().pipe(z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional()),
  durationMs: (fallback: number) => z.coerce.number().int().nonnegative().default(fallback),
  /** A gRPC target: `host:port`, `dns:///service:port`, or `ipv4:a:port,b:port`. */
  grpcTarget: (fallback: string) => z.string().regex(/^\S+$/, 'must be a gRPC target such as host:port').default(fallback),
};

/**
 * Cross-field rule of the Kafka security variables: a SASL mechanism needs its credentials.
 * Call after parseConfig; throws a ConfigError naming the variables.
 */
export function checkKafkaSasl(config: {
  KAFKA_SASL_MECHANISM?: string | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
}): void {
  if (!config.KAFKA_SASL_MECHANISM) return;
  const missing = (['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD'] as const).filter((name) => !config[name]);
  if (missing.length > 0) {
    throw new ConfigError(`Invalid configuration: ${missing.map((name) => `${name}: is required with KAFKA_SASL_MECHANISM`).join('; ')}`);
  }
}

/** The variables every backend service reads: log level, listen address and ports, its database. */
export function backendEnv(defaults: { grpcPort: number; opsPort: number; databasePoolSize?: number }) {
  return {
    LOG_LEVEL: env.logLevel(),
    HOST: env.host(),
    GRPC_PORT: env.port(defaults.grpcPort),
    OPS_PORT: env.port(defaults.opsPort),
    DATABASE_URL: env.url(),
    DATABASE_POOL_SIZE: env.count(defaults.databasePoolSize ?? 10),
    GIT_REVISION: env.optionalText(),
  };
}

/**
 * The build's revision, for `task_workspace_build_info` (platform-metrics.ts): set by the image
 * (docker/Dockerfile `--build-arg REVISION=…`), never by the chart; unset reports `unknown`.
 * Part of backendEnv; the HTTP services spread it.
 */
export const buildInfoEnv = {
  GIT_REVISION: env.optionalText(),
};

/**
 * The Kafka connection variables, spread into the parseConfig shape of every service (and migrate
 * step) that talks to Kafka; `kafkaSecurity(config)` turns them into client options and
 * `checkKafkaSasl(config)` checks the cross-field rule.
 */
export const kafkaConnectionEnv = {
  KAFKA_BROKERS: env.list(),
  /** TLS to the brokers (system trust store, or KAFKA_SSL_CA_FILE). */
  KAFKA_SSL: env.bool(false),
  /** PEM CA bundle for the brokers' certificates. */
  KAFKA_SSL_CA_FILE: env.optionalText(),
  /** SASL mechanism: plain, scram-sha-256 or scram-sha-512; unset: no SASL. */
  KAFKA_SASL_MECHANISM: env.saslMechanism(),
  KAFKA_SASL_USERNAME: env.optionalText(),
  KAFKA_SASL_PASSWORD: env.optionalText(),
};

/**
 * Settings of the topics a migration step creates (tasks: task-events.v1; webhooks: the retry,
 * redelivery and dead-letter topics), spread into its parseConfig shape. Replication defaults to
 * 3 copies with 2 in sync, so one broker can be lost; the local stack sets 1 and 1.
 */
export const kafkaTopicEnv = {
  KAFKA_TOPIC_PARTITIONS: env.count(6),
  KAFKA_TOPIC_REPLICATION_FACTOR: env.count(3),
  KAFKA_TOPIC_MIN_INSYNC_REPLICAS: env.count(2),
};

/**
 * min.insync.replicas above the replication factor would refuse every write with acks=-1.
 * Call after parseConfig; returns the durability to pass to ensureTopics.
 */
export function kafkaTopicDurability(config: { KAFKA_TOPIC_REPLICATION_FACTOR: number; KAFKA_TOPIC_MIN_INSYNC_REPLICAS: number }): TopicDurability {
  if (config.KAFKA_TOPIC_MIN_INSYNC_REPLICAS > config.KAFKA_TOPIC_REPLICATION_FACTOR) {
    throw new ConfigError(
      `Invalid configuration: KAFKA_TOPIC_MIN_INSYNC_REPLICAS: must not exceed KAFKA_TOPIC_REPLICATION_FACTOR (${config.KAFKA_TOPIC_REPLICATION_FACTOR})`,
    );
  }
  return { replicationFactor: config.KAFKA_TOPIC_REPLICATION_FACTOR, minInsyncReplicas: config.KAFKA_TOPIC_MIN_INSYNC_REPLICAS };
}

/**
 * The audit trail's settings (audit/), spread into the config.ts of each service that owns audited
 * things (tasks, attachments, webhooks) and set per service in the Helm values (`<service>.audit`).
 */
export const auditEnv = {
  /** Audit events older than this many days are deleted (default 90). */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(90),
  /** How often the retention sweep runs; 0 = never. */
  AUDIT_SWEEP_INTERVAL_MS: env.durationMs(3_600_000),
};
