// The fan-out stage: one workspace whose endpoints grow to 1 / 100 / 10,000 (SCALE_ENDPOINTS), each on
// its own host of the TLS receiver (bench/receiver, one TLS connection per host) with its own secret;
// at each count one PATCH of one task, and the time from the PATCH's answer until every endpoint has
// received it (signature checked by the receiver), deliveries/s, lost and duplicated deliveries, and
// the webhooks service's peak RSS. Endpoints are registered through the API (their secrets are
// encrypted by the webhooks service), 16 at a time.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { inParallel } from '../lib/api-client.mjs';
import { log } from '../lib/log.mjs';
import { round } from '../lib/numbers.mjs';
import { domain } from '../lib/receiver.mjs';
import { scaleWorkspace } from './fixture.mjs';
import { exitsOf, largestPeak, sampleRss } from './rss-peak.mjs';
import { settings, targets } from './settings.mjs';

/** Whether every webhooks instance still runs (a dead one delivers nothing more: no point waiting). */
const webhooksAlive = (stack) =>
  stack.services.instances
    .filter((instance) => instance.name === 'webhooks')
    .every((instance) => {
      try {
        process.kill(instance.process.child.pid, 0);
        return true;
      } catch {
        return false;
      }
    });

async function registerUpTo(fixture, receiver, count, deadline) {
  const started = performance.now();
  const first = fixture.hosts.length;
  const missing = Math.max(0, count - first);
  const registered = await inParallel(missing, 16, async (i) => {
    if (Date.now() > deadline) return false;
    const host = `f${first + i + 1}.${domain}`;
    const secret = randomBytes(24).toString('base64url');
    await receiver.addSecret(host, secret);
    await fixture.client.call('POST', '/v1/webhooks', { url: `https://${host}:${receiver.port}/hook`, secret, events: ['task.updated'] });
    fixture.hosts.push(host);
    if (fixture.hosts.length % 1000 === 0) log(`fanout: ${fixture.hosts.length} endpoints registered`);
    return true;
  });
  return { registered: registered.filter(Boolean).length, seconds: round((performance.now() - started) / 1000, 1) };
}

/** One PATCH; every delivery of it (by task name) until all endpoints have one or SCALE_FANOUT_WAIT_S passed. */
async function oneEvent(stack, fixture, receiver, count) {
  const marker = `fanout ${count} ${randomBytes(4).toString('hex')}`;
  const perHost = new Map();
  let firstAt = null;
  let lastAt = null;
  receiver.state.onDelivery = (delivery) => {
    if (delivery.name !== marker) return;
    perHost.set(delivery.host, (perHost.get(delivery.host) ?? 0) + 1);
    firstAt ??= delivery.receivedAt;
    lastAt = delivery.receivedAt;
  };
  const badBefore = receiver.state.badSignatures;
  const rss = sampleRss(stack, 200);
  const sentAt = performance.now();
  await fixture.client.call('PATCH', `/v1/tasks/${fixture.task.id}`, { name: marker });
  const acknowledgedAt = performance.now();
  const waitUntil = acknowledgedAt + settings.fanoutWaitS * 1000;
  while (perHost.size < count && performance.now() < waitUntil && webhooksAlive(stack)) await sleep(100);
  // Late duplicates (a retry of a delivery that did arrive) would come within a few seconds.
  if (webhooksAlive(stack)) await sleep(Math.min(3_000, Math.max(0, waitUntil - performance.now())));
  const peaks = rss.stop();
  receiver.state.onDelivery = null;
  const received = [...perHost.values()].reduce((sum, n) => sum + n, 0);
  const seconds = lastAt === null ? null : (lastAt - acknowledgedAt) / 1000;
  const row = {
    endpoints: count,
    patchMs: round(acknowledgedAt - sentAt, 1),
    firstDeliveryMs: firstAt === null ? null : round(firstAt - acknowledgedAt, 1),
    allDeliveredSeconds: perHost.size === count && seconds !== null ? round(seconds, 2) : null,
    lastDeliverySeconds: seconds === null ? null : round(seconds, 2),
    deliveriesPerSecond: seconds ? round(perHost.size / seconds, 0) : null,
    delivered: perHost.size,
    lost: count - perHost.size,
    duplicates: received - perHost.size,
    badSignatures: receiver.state.badSignatures - badBefore,
    webhooksPeakRssMb: Math.max(0, ...Object.entries(peaks).filter(([name]) => name.startsWith('webhooks')).map(([, peak]) => peak.peakRssMb ?? 0)),
    largestPeakRss: largestPeak(peaks),
    exited: exitsOf(peaks),
  };
  row.met =
    row.lost === 0 && row.duplicates === 0 && row.badSignatures === 0 && row.exited.length === 0 &&
    row.allDeliveredSeconds !== null && row.allDeliveredSeconds <= targets.fanoutSeconds &&
    (count < 1000 || row.deliveriesPerSecond >= targets.fanoutDeliveriesPerSecond);
  log(`fanout ${count}: ${row.delivered}/${count} delivered, last after ${row.lastDeliverySeconds} s (${row.deliveriesPerSecond}/s), lost ${row.lost}, dup ${row.duplicates}, webhooks peak RSS ${row.webhooksPeakRssMb} MB${row.exited.length ? `; EXITED: ${row.exited.join('; ')}` : ''}`);
  return row;
}

export async function benchFanOut(stack, db, receiver, deadline) {
  log('fanout: creating the workspace');
  const fixture = { ...(await scaleWorkspace(stack, db, 'Scale fan-out')), hosts: [] };
  const rows = [];
  for (const count of [...settings.fanoutEndpoints].sort((a, b) => a - b)) {
    if (Date.now() > deadline) {
      rows.push({ endpoints: count, skipped: 'the run\'s deadline (SCALE_DEADLINE_S) passed before this count' });
      continue;
    }
    log(`fanout: registering endpoints up to ${count}`);
    const registration = await registerUpTo(fixture, receiver, count, deadline);
    if (fixture.hosts.length < count) {
      rows.push({ endpoints: count, skipped: `the deadline passed while registering endpoints (${fixture.hosts.length} of ${count})`, registration });
      continue;
    }
    const row = await oneEvent(stack, fixture, receiver, count);
    rows.push({ ...row, registration });
    if (row.exited.length) {
      log('fanout: a service died; the larger counts are not measured');
      break;
    }
  }
  return { rows };
}
