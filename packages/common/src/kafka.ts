import { readFileSync } from 'node:fs';
import { Kafka, logLevel, type KafkaConfig, type LogEntry, type SASLOptions } from 'kafkajs';
import type { Logger } from 'pino';

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
