import { Kafka, logLevel, type KafkaConfig, type LogEntry } from 'kafkajs';
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
