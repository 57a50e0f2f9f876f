// Memory of each service: RSS from /proc idle at start and after the runs, and where it is (V8 heap
// vs. the rest) from the prom-client default metrics of each service's /metrics.
import { readFileSync } from 'node:fs';
import { samplesOf, scrapeMetrics } from './metrics-text.mjs';
import { round } from './numbers.mjs';

export function rssMbOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1]);
    return round(kb / 1024, 1);
  } catch {
    return null;
  }
}

/** RSS of every service instance now, by pid (taken on the idle stack, before any run). */
export const rssSnapshot = (stack) =>
  new Map(stack.services.instances.map((instance) => [instance.process.child.pid, rssMbOf(instance.process.child.pid)]));

/** V8 heap total/used and external memory (MB) from a service's /metrics, or {} without metrics. */
async function heapOf(instance) {
  try {
    const text = await scrapeMetrics(instance.opsUrl);
    const metric = (name) => {
      const [sample] = samplesOf(text, name);
      return sample ? round(sample.value / 2 ** 20, 1) : null;
    };
    return {
      heapTotalMb: metric('nodejs_heap_size_total_bytes'),
      heapUsedMb: metric('nodejs_heap_size_used_bytes'),
      externalMb: metric('nodejs_external_memory_bytes'),
    };
  } catch {
    return {}; // no metrics: RSS only
  }
}

/** One row per service instance (replicas included): RSS now and at start, V8 heap and external memory. */
export async function rssRows(stack, atStart) {
  const rows = stack.services.instances.map((instance) => ({
    name: instance.replica ? `${instance.name}-${instance.replica}` : instance.name,
    pid: instance.process.child.pid,
    rssMb: rssMbOf(instance.process.child.pid),
    rssMbAtStart: atStart.get(instance.process.child.pid) ?? null,
  }));
  for (const [i, instance] of stack.services.instances.entries()) Object.assign(rows[i], await heapOf(instance));
  return rows;
}
