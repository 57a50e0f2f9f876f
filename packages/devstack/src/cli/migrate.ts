import { DevstackError } from '../progress.js';
import { migrateAll } from '../services.js';

/** `npm run migrate`: every service's migrations against DATABASE_URL / KAFKA_BROKERS / S3_* from the environment. */
migrateAll(process.env).catch((error: unknown) => {
  process.stderr.write(`[devstack] migrate failed: ${error instanceof DevstackError ? error.message : String(error)}\n`);
  process.exit(1);
});
