import { runMigrateCommand } from '@tws/common';
import { loadConfig } from './config.js';
import { createObjectStore } from './store/object-store.js';

/** Applies the `attachments` schema migrations and creates the bucket. */
await runMigrateCommand({
  service: 'attachments',
  migrations: new URL('../migrations', import.meta.url),
  config: loadConfig,
  after: async (config) => {
    const store = createObjectStore(config);
    try {
      await store.ensureBucket();
    } finally {
      store.close();
    }
    return { bucket: config.S3_BUCKET };
  },
});
