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
import { taskEventsTopic } from './events/topics.js';

/** Applies the `tasks` schema migrations and creates the topic this service publishes to. */
const logger = createLogger('tasks-migrate');
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
    schema: 'tasks',
    directory: fileURLToPath(new URL('../migrations', import.meta.url)),
    logger,
  });
  const kafka = createKafka({ clientId: 'tasks-migrate', brokers: config.KAFKA_BROKERS, logger, ...kafkaSecurity(config) });
  await ensureTopics(kafka, [{ topic: taskEventsTopic, numPartitions: config.KAFKA_TOPIC_PARTITIONS }], durability);
  logger.info({ applied }, 'tasks migrations complete');
} catch (error) {
  exitOnStartupFailure(logger, error);
}
