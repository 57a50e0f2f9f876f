// The figures of one webhook run (the shape of `webhooks.sustained` / `webhooks.burst` in the
// results: keep its keys and their order so results stay comparable) and its progress lines.
import { load } from '../lib/load.mjs';
import { log } from '../lib/log.mjs';
import { p50p99, percentile, round } from '../lib/numbers.mjs';
import { targets } from '../lib/settings.mjs';
import { caughtUpAfter } from './stall.mjs';

/** ack → the event seen on task-events (tasks: outbox relay), and Kafka → receiver (webhooks service). */
function kafkaSplit(measured, inKafkaAt, count) {
  const toKafka = [];
  const fromKafka = [];
  for (const [id, receivedAt] of measured.firstDelivery) {
    const seq = Number(id.split(' ')[1]);
    if (inKafkaAt[seq] === null) continue;
    fromKafka.push(receivedAt - inKafkaAt[seq]);
  }
  for (let seq = 0; seq < count; seq += 1) {
    if (inKafkaAt[seq] !== null && measured.ackAt[seq] !== null) toKafka.push(inKafkaAt[seq] - measured.ackAt[seq]);
  }
  return { ackToKafkaMs: { ...p50p99(toKafka), samples: toKafka.length }, kafkaToReceiverMs: { ...p50p99(fromKafka), samples: fromKafka.length } };
}

/** Delivery rates and latencies of the measured changes. */
function deliveryFigures(measured) {
  const { firstDelivery, firstReceivedAt, lastReceivedAt, latencies, started } = measured;
  latencies.sort((a, b) => a - b);
  const spanSeconds = firstReceivedAt === null ? null : (lastReceivedAt - started) / 1000;
  return {
    // From the first PATCH sent to the last delivery received.
    deliveriesPerSecond: spanSeconds ? round(firstDelivery.size / spanSeconds, 0) : null,
    // From the first to the last delivery received (the pipeline's own rate once it is busy).
    deliveriesPerSecondBetweenFirstAndLast:
      firstReceivedAt !== null && lastReceivedAt > firstReceivedAt ? round(firstDelivery.size / ((lastReceivedAt - firstReceivedAt) / 1000), 0) : null,
    latencyMs: {
      p50: round(percentile(latencies, 50), 1),
      p90: round(percentile(latencies, 90), 1),
      p99: round(percentile(latencies, 99), 1),
      max: round(latencies.at(-1) ?? null, 1),
      samples: latencies.length,
    },
    latencyBySecond: Array.from(measured.latenciesBySecond, (values = []) => ({ deliveries: values.length, ...p50p99(values) })),
  };
}

/** The lead-in's figures (loss and latency only), or {} without a lead-in. */
function leadInFigures({ leadIn, rate, tracker, failures, counts }) {
  if (!leadIn) return {};
  const lead = tracker.leadIn;
  return {
    leadIn: {
      changes: leadIn,
      seconds: rate ? leadIn / rate : null,
      acknowledgedChanges: counts.leadInAcked,
      failedChanges: failures.leadIn,
      lost: counts.leadInExpected - lead.deliveries.size,
      duplicateRequests: lead.received - lead.deliveries.size,
      latencyMs: p50p99(lead.latencies),
    },
  };
}

/**
 * `run`: the run's parameters; `tracker`, `failures`, `counts` ({ acked, expected, leadInAcked,
 * leadInExpected }), `sendSeconds`, `maxInFlight`, `inKafkaAt`; `cpuCores`, `topStatements` and
 * `benchLoopDelay` (the load generator's event-loop delay histogram) and `parkedDeliveries` (the
 * replicas' webhook_deliveries_parked_total over it; null if a replica did not answer) of the measured part.
 */
export function runFigures({ run, tracker, failures, counts, sendSeconds, maxInFlight, inKafkaAt, cpuCores, topStatements, benchLoopDelay, parkedDeliveries }) {
  const { label, count, rate, concurrency, endpoints, leadIn, stallMs } = run;
  const { measured } = tracker;
  const delivered = deliveryFigures(measured);
  return {
    label,
    changes: count,
    targetChangesPerSecond: rate ?? null,
    concurrency: rate ? null : concurrency,
    endpoints,
    acknowledgedChanges: counts.acked,
    failedChanges: failures.measured,
    achievedChangesPerSecond: round(counts.acked / sendSeconds, 0),
    offeredDeliveriesPerSecond: rate ? rate * endpoints : null,
    maxPatchesInFlight: maxInFlight,
    ...leadInFigures({ leadIn, rate, tracker, failures, counts }),
    expectedDeliveries: counts.expected,
    deliveredUnique: measured.firstDelivery.size,
    lost: counts.expected - measured.firstDelivery.size,
    requestsReceived: measured.received,
    duplicateRequests: measured.received - measured.firstDelivery.size,
    duplicateDeliveryIdRequests: [...measured.deliveryIds.values()].reduce((sum, times) => sum + (times - 1), 0),
    foreignRequests: measured.foreign,
    ...delivered,
    ...(stallMs > 0 ? { stallMs, caughtUpAfterS: caughtUpAfter(delivered.latencyBySecond) } : {}),
    ...kafkaSplit(measured, inKafkaAt, count),
    cpuCores,
    ...(topStatements ? { topStatements } : {}),
    benchEventLoopDelayMs: {
      p99: round(benchLoopDelay.percentile(99) / 1e6, 1),
      max: round(benchLoopDelay.max / 1e6, 1),
    },
    loadavgAtEnd: load(),
    parkedDeliveries,
  };
}

/** The run's summary lines on stderr. */
export function logRunFigures(result) {
  const { label, cpuCores } = result;
  log(
    `  ${label}: ${result.deliveredUnique}/${result.expectedDeliveries} delivered, ${result.deliveriesPerSecondBetweenFirstAndLast} deliveries/s between the first and last (${result.deliveriesPerSecond} from the first change sent), p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms (ack→Kafka p50 ${result.ackToKafkaMs.p50}/p99 ${result.ackToKafkaMs.p99}, Kafka→receiver p50 ${result.kafkaToReceiverMs.p50}/p99 ${result.kafkaToReceiverMs.p99}), lost ${result.lost}, duplicates ${result.duplicateRequests}; CPU (cores) ${JSON.stringify(cpuCores)}; bench event-loop delay p99 ${result.benchEventLoopDelayMs.p99}/max ${result.benchEventLoopDelayMs.max} ms; load ${result.loadavgAtEnd[0]}; parked ${result.parkedDeliveries ?? '?'}`,
  );
  if (result.leadIn) {
    const lead = result.leadIn;
    log(
      `    lead-in (${lead.changes} changes in the ${lead.seconds} s before): p50 ${lead.latencyMs.p50} ms, p99 ${lead.latencyMs.p99} ms, lost ${lead.lost}, duplicates ${lead.duplicateRequests}`,
    );
  }
  if (result.targetChangesPerSecond) log(`    p99 ms by second: ${result.latencyBySecond.map((second) => Math.round(second.p99 ?? 0)).join(' ')}`);
  if (result.stallMs > 0) {
    log(
      `    after a ${result.stallMs} ms stall of the webhooks service: ${result.caughtUpAfterS === null ? 'never caught up' : `p99 ≤ ${targets.deliveryP99Ms} ms in every second from second ${result.caughtUpAfterS}`}`,
    );
  }
  for (const statement of result.topStatements ?? []) {
    log(`    pg: ${statement.msPerSecond} ms/s, ${statement.calls} calls × ${statement.meanMs} ms (planning ${statement.meanPlanMs}), ${statement.rowsPerCall} rows: ${statement.query}`);
  }
}
