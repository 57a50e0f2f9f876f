// BENCH_WEBHOOK_STALL_MS: freeze the webhooks service as the sustained run's measured part begins,
// and find the second from which the pipeline kept pace again.
import { onCleanup } from '../lib/cleanup.mjs';
import { targets } from '../lib/settings.mjs';
import { webhooksPids } from '../lib/stack.mjs';

/**
 * Freezes every webhooks instance for `ms` (as a long GC pause, a noisy neighbour or a throttled
 * container would): the events go on piling up in Kafka meanwhile.
 */
export function stallWebhooks(stack, ms) {
  const pids = webhooksPids(stack);
  const resume = () =>
    pids.forEach((pid) => {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // already gone
      }
    });
  onCleanup(resume); // a failed run must not stop a frozen stack
  pids.forEach((pid) => process.kill(pid, 'SIGSTOP'));
  setTimeout(resume, ms);
}

/** The first second of the run from which every second's p99 is within the target, or null. */
export function caughtUpAfter(latencyBySecond) {
  let from = null;
  latencyBySecond.forEach((second, index) => {
    if (second.p99 === null || second.p99 > targets.deliveryP99Ms) from = null;
    else from ??= index;
  });
  return from;
}
