import { createLogger, env, exitOnStartupFailure, parseConfig, runMigrations } from '@tws/common';
import { fileURLToPath } from 'node:url';

/** Applies the `webhooks` schema migrations. */
const logger = createLogger('webhooks-migrate');
try {
  const config = parseConfig({ LOG_LEVEL: env.logLevel(), DATABASE_URL: env.url() });
  logger.level = config.LOG_LEVEL;
  const applied = await runMigrations({
    url: config.DATABASE_URL,
    schema: 'webhooks',
    directory: fileURLToPath(new URL('../migrations', import.meta.url)),
    logger,
  });
  logger.info({ applied }, 'webhooks migrations complete');
} catch (error) {
  exitOnStartupFailure(logger, error);
}
