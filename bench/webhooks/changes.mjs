// The load of a webhook run: PATCHes that rename tasks to their marker, sent at a fixed rate (with an
// unmeasured lead-in first) or as fast as a number of connections allows. Each acknowledgement is
// stamped in the run's tracker.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { inParallel } from '../lib/api-client.mjs';
import { log } from '../lib/log.mjs';

/** `patch(n, ofLeadIn)` renames task `n` to its marker and stamps the acknowledgement; counts failures and PATCHes in flight. */
export function changeSender({ call, taskIds, tracker, label }) {
  const failures = { measured: 0, leadIn: 0 };
  const sender = { failures, inFlight: 0, patch };
  async function patch(n, ofLeadIn = false) {
    const [part, kind] = ofLeadIn ? [tracker.leadIn, 'leadIn'] : [tracker.measured, 'measured'];
    sender.inFlight += 1;
    try {
      await call('PATCH', `/v1/tasks/${taskIds[n % taskIds.length]}`, { name: `${part.prefix}${n}` });
      part.ackAt[n] = performance.now();
    } catch (error) {
      failures[kind] += 1;
      if (failures[kind] <= 3) log(`  ${label}: ${ofLeadIn ? 'lead-in ' : ''}PATCH failed: ${error.message}`);
    } finally {
      sender.inFlight -= 1;
    }
  }
  return sender;
}

/**
 * Sends `leadIn` then `count` changes at `rate`/s, calling `startMeasuring()` as the first measured one
 * goes out; logs progress every 5 s. Returns the most PATCHes in flight during the measured part.
 */
export async function sendAtRate({ sender, tracker, label, rate, count, leadIn, startMeasuring }) {
  const total = leadIn + count;
  let sent = 0;
  let maxInFlight = 0;
  const pending = [];
  const sendStart = performance.now();
  let lastProgress = sendStart;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - sendStart) / 1000) * rate));
    for (; sent < due; sent += 1) {
      if (sent === leadIn) startMeasuring();
      pending.push(sent < leadIn ? sender.patch(sent, true) : sender.patch(sent - leadIn));
    }
    if (sent > leadIn) maxInFlight = Math.max(maxInFlight, sender.inFlight);
    if (performance.now() - lastProgress >= 5_000) {
      lastProgress = performance.now();
      const phase = sent <= leadIn ? `lead-in ${sent}/${leadIn}` : `${sent - leadIn}/${count}`;
      log(`  ${label}: ${phase} changes sent, ${tracker.measured.received} deliveries received, ${sender.inFlight} PATCHes in flight`);
    }
    await sleep(2);
  }
  await Promise.all(pending);
  return maxInFlight;
}

/** Sends `count` changes as fast as `concurrency` PATCHes at a time go. */
export async function sendAtConcurrency({ sender, count, concurrency, startMeasuring }) {
  startMeasuring();
  await inParallel(count, concurrency, (seq) => sender.patch(seq));
  return concurrency;
}
