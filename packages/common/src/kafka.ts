import { readFileSync } from 'node:fs';
import { Kafka, logLevel, type Admin, type KafkaConfig, type LogEntry, type SASLOptions } from 'kafkajs';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { withTimeout } from './readiness.js';

export type { Kafka } from 'kafkajs';

const pinoLevelOf: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/**
 * The one place a service builds its Kafka client, so a kafkajs-compatible client can replace it.
 * kafkajs logs go through the service's JSON logger.
 */
export function createKafka(options: { clientId: string; brokers: string[]; logger: Logger } & Partial<KafkaConfig>): Kafka {
  const { logger, ...config } = options;
  const kafkaLogger = logger.child({ component: 'kafkajs' });
  return new Kafka({
    ...config,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log }: LogEntry) => {
        const { message, ...extra } = log;
        kafkaLogger[pinoLevelOf[level] ?? 'info'](extra, message);
      },
    retry: { initialRetryTime: 300, retries: 8, ...config.retry },
  });
}

/**
 * `kafka_reachable`: 1 when the cluster answered a metadata request (within `timeoutMs`) at the
 * last scrape, else 0. Kafka is not a readiness check of any service: consumers and producers
 * reconnect by themselves, and no service's API needs it to answer, so an outage must not take
 * pods out of their Service (that cascades up to the gateway). This gauge is how its state is
 * watched instead. One probe at a time: a scrape during a slow probe waits for that one.
 */
export function kafkaReachableGauge(registry: Registry, admin: Admin, timeoutMs = 2_000): Gauge {
  let probe: Promise<boolean> | undefined;
  const reach = (): Promise<boolean> =>
    (probe ??= (async () => {
      try {
        await admin.connect();
        await admin.describeCluster();
        return true;
      } catch {
        return false;
      } finally {
        probe = undefined;
      }
    })());
  return new Gauge({
    name: 'kafka_reachable',
    help: '1 when this process reached the Kafka cluster (metadata request) at the last scrape, else 0.',
    registers: [registry],
    async collect() {
      const reached = await withTimeout(reach(), timeoutMs, 'timed out').catch(() => false);
      this.set(reached ? 1 : 0);
    },
  });
}

/** Creates the topics that do not exist yet (idempotent; used by migration jobs). */
export async function ensureTopics(
  kafka: Kafka,
  topics: Array<{ topic: string; numPartitions: number; configEntries?: Array<{ name: string; value: string }> }>,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter(({ topic }) => !existing.has(topic));
    if (missing.length > 0) await admin.createTopics({ topics: missing, waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

/** Kafka connection security as every service's config.ts declares it (KAFKA_SSL, KAFKA_SASL_*). */
export interface KafkaSecuritySettings {
  KAFKA_SSL: boolean;
  KAFKA_SSL_CA_FILE?: string | undefined;
  KAFKA_SASL_MECHANISM?: 'plain' | 'scram-sha-256' | 'scram-sha-512' | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
}

/**
 * kafkajs `ssl`/`sasl` options from the settings: TLS with the system trust store or a CA bundle
 * file, and SASL PLAIN or SCRAM (independent of TLS, as kafkajs allows).
 */
export function kafkaSecurity(settings: KafkaSecuritySettings): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const options: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  if (settings.KAFKA_SSL) {
    options.ssl = settings.KAFKA_SSL_CA_FILE ? { ca: [readFileSync(settings.KAFKA_SSL_CA_FILE, 'utf8')] } : true;
  }
  if (settings.KAFKA_SASL_MECHANISM) {
    const credentials = { username: settings.KAFKA_SASL_USERNAME ?? '', password: settings.KAFKA_SASL_PASSWORD ?? '' };
    options.sasl = { mechanism: settings.KAFKA_SASL_MECHANISM, ...credentials } as SASLOptions;
  }
  return options;
}
