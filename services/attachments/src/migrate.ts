import { createLogger, exitOnStartupFailure, runMigrations } from '@tws/common';
import { fileURLToPath } from 'node:url';
import { loadConfig } from './config.js';
import { createObjectStore } from './storage/object-store.js';

/** Applies the `attachments` schema migrations and creates the bucket. */
const logger = createLogger('attachments-migrate');
try {
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  const applied = await runMigrations({
    url: config.DATABASE_URL,
    schema: 'attachments',
    directory: fileURLToPath(new URL('../migrations', import.meta.url)),
    logger,
  });
  const store = createObjectStore(config);
  try {
    await store.ensureBucket();
  } finally {
    store.close();
  }
  logger.info({ applied, bucket: config.S3_BUCKET }, 'attachments migrations complete');
} catch (error) {
  exitOnStartupFailure(logger, error);
}
