import { runMigrateCommand } from '@tws/common';

/** Applies the `web` schema migrations (sessions). */
await runMigrateCommand({ service: 'web', migrations: new URL('../migrations', import.meta.url) });
