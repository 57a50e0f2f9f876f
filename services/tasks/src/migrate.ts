import { runMigrateCommand } from '@tws/common';
import { taskEventsTopic } from '@tws/contracts';

/** Applies the `tasks` schema migrations and creates the topic this service publishes to. */
await runMigrateCommand({
  service: 'tasks',
  migrations: new URL('../migrations', import.meta.url),
  topics: ({ partitions }) => [{ topic: taskEventsTopic, numPartitions: partitions }],
});
