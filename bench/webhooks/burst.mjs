// The burst webhook run: BENCH_BURST_CHANGES changes as fast as 64 connections go, to
// BENCH_BURST_ENDPOINTS endpoints. No rate target (it shows the maximum); nothing may be lost.
import { log } from '../lib/log.mjs';
import { settings } from '../lib/settings.mjs';
import { measuredRun } from './measured-run.mjs';

export async function benchBurst(context) {
  const { endpointHosts, registerEndpoints } = context;
  await registerEndpoints(Math.max(0, settings.burstEndpoints - endpointHosts.length));
  log(`webhooks: burst: ${settings.burstChanges} changes as fast as 64 connections go × ${endpointHosts.length} endpoints`);
  return measuredRun(context, { label: 'burst', count: settings.burstChanges, concurrency: 64, endpoints: endpointHosts.length });
}
