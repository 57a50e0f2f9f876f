// A counter of a service summed over its instances (replicas included), from each instance's
// /metrics (Prometheus text): e.g. how many deliveries the webhooks replicas parked during a run.
// An instance that does not answer counts as null for the whole sum (a figure, not a guess).
import { scrapeMetrics, sumOf } from './metrics-text.mjs';

/** `metric` summed over every instance of `service` now, or null if one of them did not answer. */
export async function counterTotal(stack, service, metric) {
  let total = 0;
  for (const instance of stack.services.instances.filter((candidate) => candidate.name === service)) {
    try {
      total += sumOf(await scrapeMetrics(instance.opsUrl, 5_000), metric);
    } catch {
      return null;
    }
  }
  return total;
}
