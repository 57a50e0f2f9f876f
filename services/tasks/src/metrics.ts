import type { Logger, Queryable } from '@tws/common';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { outboxBacklog } from './store/outbox.js';

/** The outbox relay's metrics (docs/api.md "Events"). */
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

/** The revocation feed on this replica: its LISTEN session and the gateways' streams (domain/revocation-hub.ts). */
export interface RevocationHubMetrics {
  listenerConnected: Gauge;
  watchers: Gauge;
  delivered: Counter;
  dropped: Counter<'reason'>;
}

/** The revoking side (domain/revocation-publisher.ts). */
export interface RevocationPublisherMetrics {
  confirmSeconds: Histogram<'outcome'>;
}

export function createRevocationMetrics(registry: Registry): { hub: RevocationHubMetrics; publisher: RevocationPublisherMetrics } {
  const registers = [registry];
  return {
    hub: {
      listenerConnected: new Gauge({
        name: 'auth_revocation_listener_connected',
        help: '1 while this replica LISTENs for revocations (it accepts gateway streams only then), else 0.',
        registers,
      }),
      watchers: new Gauge({
        name: 'auth_revocation_watchers',
        help: 'Gateway revocation streams held by this replica.',
        registers,
      }),
      delivered: new Counter({
        name: 'auth_revocations_delivered_total',
        help: 'Revocations heard by this replica and sent to its watchers.',
        registers,
      }),
      dropped: new Counter({
        name: 'auth_revocation_watchers_dropped_total',
        help: 'Gateway streams cut off by this replica, by reason (slow, ack_timeout, listener_down, shutdown).',
        labelNames: ['reason'],
        registers,
      }),
    },
    publisher: {
      confirmSeconds: new Histogram({
        name: 'auth_revocation_confirm_seconds',
        help: 'From the start of a revocation to every listening replica confirming its gateways applied it, by outcome (confirmed, timeout).',
        labelNames: ['outcome'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers,
      }),
    },
  };
}
