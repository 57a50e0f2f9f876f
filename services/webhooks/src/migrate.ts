import { runMigrateCommand } from '@tws/common';
import { deadLetterTopic, redeliveryTopic, retryTopics } from '@tws/contracts';

const days = (count: number) => String(count * 24 * 3600 * 1000);

/** Applies the `webhooks` schema migrations and creates the delay, redelivery and dead-letter topics. */
await runMigrateCommand({
  service: 'webhooks',
  migrations: new URL('../migrations', import.meta.url),
  topics: ({ partitions }) => [
    // Delay topics hold a message for at most 8 h (plus consumer downtime); keep a week like the default.
    ...[...retryTopics, redeliveryTopic].map((topic) => ({
      topic,
      numPartitions: partitions,
      configEntries: [{ name: 'retention.ms', value: days(7) }],
    })),
    // Permanently failed deliveries are kept for operators for 30 days.
    { topic: deadLetterTopic, numPartitions: partitions, configEntries: [{ name: 'retention.ms', value: days(30) }] },
  ],
});
