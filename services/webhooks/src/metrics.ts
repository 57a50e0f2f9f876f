import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { eventLoopSaturation, latencyHistogram } from '@tws/common';

export interface WebhookMetrics {
  deliveries: Counter<'result' | 'attempt'>;
  duration: Histogram<'result'>;
  ssrfBlocked: Counter<'stage'>;
  dead: Counter;
  invalidMessages: Counter<'topic'>;
  consumerLag: Gauge<'topic' | 'partition'>;
  eventToFirstAttempt: Histogram;
  /** `webhook_deliveries_in_flight` reads `read()` at each scrape (not set per delivery). */
  countInFlight(read: () => number): void;
  parked: Counter;
  skippedDeleted: Counter;
  autoDisabled: Counter;
}

/** The webhook series, on the service's registry (`service="webhooks"` is added by the registry). */
export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  let inFlight = (): number => 0;
  new Gauge({
    name: 'webhook_deliveries_in_flight',
    help: 'Deliveries accepted from Kafka and not settled yet on this replica.',
    registers: [registry],
    collect() {
      this.set(inFlight());
    },
  });
  new Gauge({
    name: 'webhook_replica_saturated',
    help: "1 while this replica's event loop was active at least 90 % of the last second: deliveries to quick endpoints then wait in Kafka instead of being parked.",
    registers: [registry],
    collect() {
      this.set(eventLoopSaturation.saturated() ? 1 : 0);
    },
  });
  return {
    deliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Delivery attempts by result (succeeded, failed, blocked) and attempt number (1..5).',
      labelNames: ['result', 'attempt'],
      registers: [registry],
    }),
    // With trace_id exemplars when tracing runs (@tws/common exemplars.ts): observed with observeLatency.
    duration: latencyHistogram(registry, {
      name: 'webhook_delivery_duration_seconds',
      help: 'Time of one delivery attempt (DNS check, connect, request, response), by result.',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
    ssrfBlocked: new Counter({
      name: 'webhook_ssrf_blocked_total',
      help: 'Endpoint URLs refused by the SSRF guard, at registration or at an attempt.',
      labelNames: ['stage'],
      registers: [registry],
    }),
    dead: new Counter({
      name: 'webhook_deliveries_dead_total',
      help: 'Deliveries permanently failed after the last attempt (sent to webhooks.dead).',
      registers: [registry],
    }),
    invalidMessages: new Counter({
      name: 'webhook_invalid_messages_total',
      help: 'Kafka messages skipped because they did not validate.',
      labelNames: ['topic'],
      registers: [registry],
    }),
    consumerLag: new Gauge({
      name: 'webhook_consumer_lag_messages',
      help: 'Messages between the last fetched offset and the high watermark, per topic partition.',
      labelNames: ['topic', 'partition'],
      registers: [registry],
    }),
    eventToFirstAttempt: new Histogram({
      name: 'webhook_event_to_delivery_seconds',
      help: 'From the task event reaching Kafka (message timestamp) to the end of its successful first attempt.',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    countInFlight(read) {
      inFlight = read;
    },
    parked: new Counter({
      name: 'webhook_deliveries_parked_total',
      help: "Attempts handed to their endpoint's backlog in Postgres because the endpoint held its share of work.",
      registers: [registry],
    }),
    skippedDeleted: new Counter({
      name: 'webhook_attempts_skipped_deleted_total',
      help: 'Attempts not started because their endpoint was deleted meanwhile.',
      registers: [registry],
    }),
    autoDisabled: new Counter({
      name: 'webhook_endpoints_auto_disabled_total',
      help: 'Endpoints disabled because every attempt to them failed for WEBHOOK_AUTO_DISABLE_AFTER_SECONDS.',
      registers: [registry],
    }),
  };
}
