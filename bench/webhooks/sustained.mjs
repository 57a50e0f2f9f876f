// The sustained webhook run: a warm-up at the rate, then (after the pipeline is idle and the host
// probe) a lead-in and the measured changes at BENCH_WEBHOOK_RATE for BENCH_WEBHOOK_SECONDS, with the
// optional stall of BENCH_WEBHOOK_STALL_MS. Its target: keep pace with ≥ 2,000 deliveries/s offered.
import { probeHostSpeed } from '../lib/host-speed.mjs';
import { waitForPipelineIdle } from '../lib/kafka.mjs';
import { log } from '../lib/log.mjs';
import { settings, targets } from '../lib/settings.mjs';
import { measuredRun } from './measured-run.mjs';

/**
 * The sustained run offers exactly `rate × endpoints` deliveries a second. Sustaining that rate means
 * keeping pace with it: every delivery arrives, none later than the latency bound allows (p99). A
 * delivered-per-second figure cannot prove more: over the run it is the offered rate, give or take the
 * difference between the first and the last delivery's latency (±1.25 % at 250 ms over 20 s).
 */
export function keptPace(run) {
  const leadInClean = !run.leadIn || (run.leadIn.lost === 0 && run.leadIn.duplicateRequests === 0);
  return run.offeredDeliveriesPerSecond >= targets.deliveriesPerSecond && run.lost === 0 && leadInClean && run.latencyMs.p99 <= targets.deliveryP99Ms;
}

export async function benchSustained(context) {
  const { stack, endpointHosts } = context;
  // Long enough at the measured rate for every process on the path (V8, the broker) to compile the hot
  // code: after 10 s the stack was still draining the backlog of its cold start, and the measured run
  // began with seconds of p50 ~150 ms instead of ~50 ms.
  const warmupChanges = settings.webhookRate * settings.webhookWarmupS;
  log(`webhooks: warm-up (${warmupChanges} changes at ${settings.webhookRate}/s)`);
  await measuredRun(context, { label: 'warmup', count: warmupChanges, rate: settings.webhookRate, endpoints: endpointHosts.length });
  await waitForPipelineIdle(stack, 'webhooks: before the sustained run');
  const hostProbeMs = probeHostSpeed();
  log(`webhooks: host probe ${hostProbeMs} ms (lower is faster; see bench/README.md)`);
  log(
    `webhooks: sustained: ${settings.webhookRate} changes/s for ${settings.webhookSeconds} s × ${endpointHosts.length} endpoints = ${settings.webhookRate * endpointHosts.length} deliveries/s offered`,
  );
  // The first seconds after the step from idle to the rate are the lead-in (reported, not measured).
  const sustained = await measuredRun(context, {
    label: 'sustained',
    count: settings.webhookRate * settings.webhookSeconds,
    rate: settings.webhookRate,
    endpoints: endpointHosts.length,
    leadIn: Math.round(settings.webhookRate * settings.webhookLeadInS),
    stallMs: settings.webhookStallMs,
  });
  sustained.hostProbeMsBefore = hostProbeMs;
  return sustained;
}
