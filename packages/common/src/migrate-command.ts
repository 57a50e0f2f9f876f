import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { checkKafkaSasl, env, kafkaConnectionEnv, kafkaTopicDurability, kafkaTopicEnv, parseConfig } from './config.js';
import { createKafka, ensureTopics, kafkaSecurity, type TopicSpec } from './kafka.js';
import { createLogger } from './logger.js';
import { runMigrations } from './migrations.js';
import { exitOnStartupFailure } from './shutdown.js';

export interface MigrateCommandOptions<Config> {
  /** The service: its Postgres schema, and its logger `<service>-migrate`. */
  service: string;
  /** The folder of `NNN_name.sql` files, e.g. `new URL('../migrations', import.meta.url)`. */
  migrations: URL;
  /**
   * The Kafka topics the service owns, created (or checked) with the configured replication; with
   * it the Kafka connection and topic variables are read too (KAFKA_BROKERS, KAFKA_TOPIC_*).
   */
  topics?: (settings: { partitions: number }) => TopicSpec[];
  /** More configuration the step needs (read before anything is changed, so a mistake fails fast). */
  config?: () => Config;
  /** What else to prepare after the migrations (a bucket); returns facts for the closing log line. */
  after?: (config: Config, logger: Logger) => Promise<Record<string, unknown> | void>;
}

/**
 * A service's `migrate.ts` in one call: reads LOG_LEVEL and DATABASE_URL (and the Kafka variables
 * when the service owns topics), applies its schema's migrations, creates its topics, runs `after`,
 * and exits non-zero with a message naming the problem on any failure. Idempotent: the Helm hook
 * Job and `npm run migrate` run it on every release.
 */
export async function runMigrateCommand<Config = undefined>(options: MigrateCommandOptions<Config>): Promise<void> {
  const logger = createLogger(`${options.service}-migrate`);
  try {
    const base = parseConfig({ LOG_LEVEL: env.logLevel(), DATABASE_URL: env.url() });
    logger.level = base.LOG_LEVEL;
    const kafka = options.topics ? parseConfig({ ...kafkaConnectionEnv, ...kafkaTopicEnv }) : undefined;
    if (kafka) checkKafkaSasl(kafka);
    const durability = kafka ? kafkaTopicDurability(kafka) : undefined;
    const config = options.config?.() as Config;
    const applied = await runMigrations({
      url: base.DATABASE_URL,
      schema: options.service,
      directory: fileURLToPath(options.migrations),
      logger,
    });
    if (kafka && durability && options.topics) {
      const client = createKafka({ clientId: `${options.service}-migrate`, brokers: kafka.KAFKA_BROKERS, logger, ...kafkaSecurity(kafka) });
      await ensureTopics(client, options.topics({ partitions: kafka.KAFKA_TOPIC_PARTITIONS }), durability);
    }
    const facts = (await options.after?.(config, logger)) ?? {};
    logger.info({ applied, ...facts }, `${options.service} migrations complete`);
  } catch (error) {
    exitOnStartupFailure(logger, error);
  }
}
