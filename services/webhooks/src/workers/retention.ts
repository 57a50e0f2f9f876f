import { PeriodicJob, type Logger } from '@tws/common';
import type { RetentionStore } from '../store/retention.js';

export interface RetentionOptions {
  store: RetentionStore;
  /** WEBHOOK_LOG_RETENTION_DAYS: finished deliveries older than this leave the delivery log. */
  retentionDays: number;
  logger: Logger;
  intervalMs?: number;
}

/**
 * Keeps the delivery log bounded: a first sweep a minute after start, then hourly. Every replica runs
 * it (the statements are idempotent and delete in small batches); a failed sweep is logged and
 * retried at the next interval.
 */
export function deliveryLogRetention(options: RetentionOptions): PeriodicJob {
  const { store, retentionDays: days, logger } = options;
  return new PeriodicJob({
    name: 'delivery log retention',
    intervalMs: options.intervalMs ?? 3_600_000,
    firstRunAfterMs: 60_000,
    logger,
    run: async () => {
      const removed = await store.sweep(days);
      if (removed.deliveries + removed.events + removed.endpoints > 0) logger.info({ removed, days }, 'delivery log retention');
    },
  });
}
