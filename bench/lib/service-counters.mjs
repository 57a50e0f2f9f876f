// A counter of a service summed over its instances (replicas included), from each instance's
// /metrics (Prometheus text): e.g. how many deliveries the webhooks replicas parked during a run.
// An instance that does not answer counts as null for the whole sum (a figure, not a guess).

/** The sum of `metric` (every label set) in a Prometheus text exposition; 0 when it has no sample. */
export function sumOfCounter(text, metric) {
  let sum = 0;
  const pattern = new RegExp(`^${metric}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm');
  for (const match of text.matchAll(pattern)) sum += Number(match[1]);
  return sum;
}

/** `metric` summed over every instance of `service` now, or null if one of them did not answer. */
export async function counterTotal(stack, service, metric) {
  let total = 0;
  for (const instance of stack.services.instances.filter((candidate) => candidate.name === service)) {
    try {
      const response = await fetch(`${instance.opsUrl}/metrics`, { signal: AbortSignal.timeout(5_000) });
      if (!response.ok) return null;
      total += sumOfCounter(await response.text(), metric);
    } catch {
      return null;
    }
  }
  return total;
}
