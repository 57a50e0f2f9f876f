import {
  checkKafkaSasl,
  createKafka,
  createLogger,
  ensureTopics,
  env,
  exitOnStartupFailure,
  kafkaSecurity,
  kafkaTopicDurability,
  kafkaTopicEnv,
  parseConfig,
  runMigrations,
} from '@tws/common';
import { fileURLToPath } from 'node:url';
import { deadLetterTopic, redeliveryTopic, retryTopics } from './retry/schedule.js';

/** Applies the `webhooks` schema migrations and creates the delay, redelivery and dead-letter topics. */
const logger = createLogger('webhooks-migrate');
try {
  const config = parseConfig({
    LOG_LEVEL: env.logLevel(),
    DATABASE_URL: env.url(),
    KAFKA_BROKERS: env.list(),
    /** TLS to the brokers (system trust store, or KAFKA_SSL_CA_FILE). */
    KAFKA_SSL: env.bool(false),
    /** PEM CA bundle for the brokers' certificates. */
    KAFKA_SSL_CA_FILE: env.optionalText(),
    /** SASL mechanism: plain, scram-sha-256 or scram-sha-512; unset: no SASL. */
    KAFKA_SASL_MECHANISM: env.saslMechanism(),
    KAFKA_SASL_USERNAME: env.optionalText(),
    KAFKA_SASL_PASSWORD: env.optionalText(),
    ...kafkaTopicEnv,
  });
  checkKafkaSasl(config);
  const durability = kafkaTopicDurability(config);
  logger.level = config.LOG_LEVEL;
  const applied = await runMigrations({
    url: config.DATABASE_URL,
    schema: 'webhooks',
    directory: fileURLToPath(new URL('../migrations', import.meta.url)),
    logger,
  });
  // Delay topics hold a message for at most 8 h (plus consumer downtime); keep a week like the default.
  const week = String(7 * 24 * 3600 * 1000);
  const kafka = createKafka({ clientId: 'webhooks-migrate', brokers: config.KAFKA_BROKERS, logger, ...kafkaSecurity(config) });
  const topics = [
    ...[...retryTopics, redeliveryTopic].map((topic) => ({
      topic,
      numPartitions: config.KAFKA_TOPIC_PARTITIONS,
      configEntries: [{ name: 'retention.ms', value: week }],
    })),
    // Permanently failed deliveries are kept for operators for 30 days.
    {
      topic: deadLetterTopic,
      numPartitions: config.KAFKA_TOPIC_PARTITIONS,
      configEntries: [{ name: 'retention.ms', value: String(30 * 24 * 3600 * 1000) }],
    },
  ];
  await ensureTopics(kafka, topics, durability);
  logger.info({ applied }, 'webhooks migrations complete');
} catch (error) {
  exitOnStartupFailure(logger, error);
}
