import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WebhooksFeed } from '../support/webhooks/feed.js';
import { taskEventMessage } from '../support/webhooks/fixtures.js';
import { startReceiver } from '../support/webhooks/receiver.js';
import { taskEventsTopic } from '@tws/contracts';

/**
 * Issue #14, finding 2: one workspace must not delay another's webhooks. Workspace A has ten
 * endpoints that accept the connection and never answer; it gets 30 task changes a second for 15 s
 * (300 deliveries/s, each held up to the 10 s attempt time-out). Workspace B, meanwhile, gets a few
 * changes a second to one healthy endpoint: its event-to-delivery p99 must stay under 1 s. Then A's
 * endpoints recover and every (event, endpoint) pair of A is delivered: nothing of the parked
 * backlog or the timed-out attempts is lost. Events go to task-events.v1 as the tasks service's relay
 * publishes them; endpoints are registered over gRPC (the shared stack's single webhooks replica).
 */
const FEED_SECONDS = 15;
const NOISY_RATE = 30;
const VICTIM_RATE = 4;
const NOISY_ENDPOINTS = 10;

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

describe('a workspace with hanging endpoints does not delay another workspace', () => {
  const { services } = inject('stack');
  let feed: WebhooksFeed;

  beforeAll(async () => {
    feed = await WebhooksFeed.open();
  });
  afterAll(async () => {
    await feed?.close();
  });

  it('keeps the victim p99 under 1 s while ten hanging endpoints take 30 changes/s, and loses none of the noisy backlog', async () => {
    let hanging = true;
    const noisyWorkspace = randomUUID();
    const victimWorkspace = randomUUID();
    const secret = `whsec_${randomBytes(12).toString('hex')}`;
    const noisy = await Promise.all(
      Array.from({ length: NOISY_ENDPOINTS }, () => startReceiver({ reply: () => (hanging ? 'hang' : 200) })),
    );
    const victim = await startReceiver();
    for (const receiver of noisy) await feed.register(noisyWorkspace, receiver, secret);
    await feed.register(victimWorkspace, victim, secret);

    const noisyTasks = Array.from({ length: 20 }, () => randomUUID());
    const noisyIds: string[] = [];
    // Event-to-delivery starts when the event is in Kafka: the broker acknowledged it (acks=-1).
    const victimSentAt = new Map<string, number>();
    const victimAckedAt = new Map<string, number>();
    // Warm the producer up (connection, topic metadata) before the clock runs.
    await feed.producer.send({ topic: taskEventsTopic, acks: -1, messages: [taskEventMessage({ workspaceId: randomUUID(), kind: 'task.updated' }).message] });
    const sends: Array<Promise<unknown>> = [];
    const started = Date.now();
    for (let tick = 0; tick < FEED_SECONDS * NOISY_RATE; tick++) {
      const event = taskEventMessage({ workspaceId: noisyWorkspace, kind: 'task.updated', taskId: noisyTasks[tick % noisyTasks.length], name: `noisy ${tick}` });
      noisyIds.push(event.payload.id);
      sends.push(feed.producer.send({ topic: taskEventsTopic, acks: -1, messages: [event.message] }));
      if (tick % (NOISY_RATE / VICTIM_RATE) === 0) {
        const probe = taskEventMessage({ workspaceId: victimWorkspace, kind: 'task.updated', name: `victim ${tick}` });
        victimSentAt.set(probe.payload.id, Date.now());
        sends.push(
          feed.producer.send({ topic: taskEventsTopic, acks: -1, messages: [probe.message] }).then(() => victimAckedAt.set(probe.payload.id, Date.now())),
        );
      }
      const next = started + ((tick + 1) * 1000) / NOISY_RATE;
      await sleep(Math.max(0, next - Date.now()));
    }
    await Promise.all(sends);

    // The victim: every probe delivered; latency from the publish to the receiver.
    await victim.waitFor(victimSentAt.size, 120_000);
    const latencies = victim.requests.map((request) => Math.max(0, request.receivedAt - victimAckedAt.get(String(request.headers['x-service-delivery']))!));
    const p99 = percentile(latencies, 99);
    // Per probe: sent at (ms into the run) / broker ack after / delivered after the ack.
    const series = victim.requests.map((request) => {
      const id = String(request.headers['x-service-delivery']);
      return `${victimSentAt.get(id)! - started}/${victimAckedAt.get(id)! - victimSentAt.get(id)!}/${request.receivedAt - victimAckedAt.get(id)!}`;
    });
    console.log(`victim probes (sent at / kafka ack after / delivered after the ack, ms): ${series.join(' ')}`);
    const hangingRequests = noisy.reduce((sum, receiver) => sum + receiver.requests.length, 0);

    // The noisy workspace recovers: every (event, endpoint) pair arrives, with a 200.
    hanging = false;
    const recoveredAt = Date.now();
    const delivered = () =>
      noisy.map((receiver) => new Set(receiver.requests.filter((request) => request.status === 200).map((request) => String(request.headers['x-service-delivery']))));
    const complete = () => delivered().every((ids) => noisyIds.every((id) => ids.has(id)));
    const deadline = Date.now() + 150_000;
    while (!complete() && Date.now() < deadline) await sleep(500);
    const missing = delivered().reduce((sum, ids) => sum + noisyIds.filter((id) => !ids.has(id)).length, 0);

    const ops = services.find((service) => service.name === 'webhooks')?.opsUrl;
    const metrics = ops ? await (await fetch(`${ops}/metrics`)).text() : '';
    console.log(metrics.split('\n').filter((line) => line.startsWith('webhook_event_to_delivery_seconds')).join('\n'));
    const parked = /webhook_deliveries_parked_total\{[^}]*\} (\d+)/.exec(metrics)?.[1] ?? '?';
    console.log(
      `noisy neighbour: victim ${latencies.length} probes, p50 ${percentile(latencies, 50)} ms, p99 ${p99} ms, max ${Math.max(...latencies)} ms; ` +
        `noisy: ${noisyIds.length} events × ${NOISY_ENDPOINTS} endpoints, ${hangingRequests} requests while hanging, ${parked} parked (service total); ` +
        `all ${noisyIds.length * NOISY_ENDPOINTS} delivered ${((Date.now() - recoveredAt) / 1000).toFixed(1)} s after recovery (missing ${missing})`,
    );
    expect(latencies).toHaveLength(victimSentAt.size);
    expect(p99).toBeLessThan(1_000);
    expect(missing).toBe(0);
  }, 300_000);
});
