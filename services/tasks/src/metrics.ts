import type { Logger, Queryable } from '@tws/common';
import { Counter, Gauge, type Registry } from 'prom-client';
import { outboxBacklog } from './store/outbox.js';

/** The outbox relay's metrics (README "Events and the outbox relay"). */
export interface OutboxMetrics {
  published: Counter;
  requests: Counter;
  rejected: Counter;
  /** 1 on the replica that holds the relay's advisory lock. */
  active: Gauge;
}

/**
 * Registers the outbox metrics: the relay's counters and gauge, and the backlog gauges, which are
 * read from the table (through `pool`) at scrape time so every replica reports them, active or not.
 */
export function createOutboxMetrics(registry: Registry, pool: Queryable, logger: Logger): OutboxMetrics {
  const registers = [registry];
  const metrics: OutboxMetrics = {
    published: new Counter({
      name: 'outbox_published_events_total',
      help: 'Outbox events published to Kafka and acknowledged by the broker.',
      registers,
    }),
    requests: new Counter({
      name: 'outbox_publish_requests_total',
      help: 'Kafka requests of the outbox relay (events per request = published ÷ requests).',
      registers,
    }),
    rejected: new Counter({
      name: 'outbox_rejected_events_total',
      help: 'Outbox events whose payload failed validation and were set aside (never published).',
      registers,
    }),
    active: new Gauge({
      name: 'outbox_relay_active',
      help: '1 when this replica is the active outbox relay (holds the advisory lock), else 0.',
      registers,
    }),
  };
  registerBacklogMetrics(registry, pool, logger);
  return metrics;
}

/**
 * `outbox_backlog_events` and `outbox_oldest_event_age_seconds`, read from the table at scrape time
 * (one query shared by both gauges), so every replica reports them, active or not.
 */
function registerBacklogMetrics(registry: Registry, pool: Queryable, logger: Logger): void {
  let cached: { at: number; value: Promise<{ backlog: number; age: number } | null> } | undefined;
  const read = (): Promise<{ backlog: number; age: number } | null> => {
    if (cached && Date.now() - cached.at < 1_000) return cached.value;
    const value = outboxBacklog(pool).catch((error: unknown) => {
        logger.warn({ err: error }, 'could not read the outbox backlog for metrics');
        return null;
      });
    cached = { at: Date.now(), value };
    return value;
  };
  new Gauge({
    name: 'outbox_backlog_events',
    help: 'Outbox events not yet published to Kafka.',
    registers: [registry],
    async collect() {
      const result = await read();
      if (result) this.set(result.backlog);
    },
  });
  new Gauge({
    name: 'outbox_oldest_event_age_seconds',
    help: 'Age of the oldest outbox event not yet published (0 when none).',
    registers: [registry],
    async collect() {
      const result = await read();
      if (result) this.set(result.age);
    },
  });
}
