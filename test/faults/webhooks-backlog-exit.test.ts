import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { callUnary, createPool, type Pool } from '@tws/common';
import { setDnsRecord } from '@tws/devstack';
import { loadWebhooksProto } from '@tws/proto-types';
import type { WebhooksServiceClient } from '@tws/proto-types/generated/webhooks/v1/WebhooksService';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kafkaClient, taskEventMessage } from '../support/webhooks/fixtures.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';
import { taskEventsTopic } from '@tws/contracts';

/**
 * An endpoint's backlog ends while its load goes on. The endpoint answers slowly for a few seconds
 * (3 s an attempt), so its deliveries are parked; then it answers at once, and the events keep coming
 * at 200 a second over 40 tasks. Event order binds a task's first attempts only, so each task leaves
 * the backlog once the drainer reached its last parked delivery: by the last seconds of the feed the
 * endpoint has nothing parked. (Behind the endpoint's whole backlog, a fan-out found the deliveries the
 * drainer had handed out and not logged yet, parked its own too, and the backlog lasted as long as the
 * load.) Every event arrives, each task's in event order.
 */
const RATE = 200;
const TASKS = 40;
const SLOW_SECONDS = 4;
const FAST_SECONDS = 14;
/** The last seconds of the feed, in which nothing may be parked. */
const CALM_SECONDS = 5;

describe('an endpoint under steady load leaves its backlog', () => {
  const { webhooks, databaseUrl } = inject('stack');
  let client: WebhooksServiceClient;
  let producer: Producer;
  let pool: Pool;
  let receiver: TestReceiver | undefined;

  beforeAll(async () => {
    const proto = loadWebhooksProto();
    client = new proto.webhooks.v1.WebhooksService(webhooks.grpcTarget, grpc.credentials.createInsecure());
    producer = kafkaClient().producer();
    await producer.connect();
    pool = createPool({ url: databaseUrl, schema: 'webhooks', applicationName: 'webhooks-backlog-exit-test', max: 1 });
  });
  afterAll(async () => {
    await producer?.disconnect();
    client?.close();
    await pool?.end();
    if (receiver) {
      await receiver.close();
      await setDnsRecord(webhooks.dnsControlUrl, receiver.host, undefined);
    }
  });

  it('parks while the endpoint is slow, parks nothing once the drainer caught up, and keeps each task in order', async () => {
    let slow = true;
    const workspaceId = randomUUID();
    receiver = await startReceiver({ reply: () => (slow ? { status: 200, delayMs: 3_000 } : 200) });
    await setDnsRecord(webhooks.dnsControlUrl, receiver.host, { a: [webhooks.receiverAddress], ttl: 30 });
    const secret = `whsec_${randomBytes(12).toString('hex')}`;
    const { endpoint } = await callUnary(client, client.CreateEndpoint, { workspaceId, url: `${receiver.origin}/`, secret, events: [] });
    const endpointId = endpoint?.id ?? '';
    expect(endpointId).toMatch(/^[0-9a-f-]{36}$/);
    const parkedNow = async () =>
      Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM deliveries WHERE endpoint_id = $1 AND parked', [endpointId])).rows[0]?.n);

    const tasks = Array.from({ length: TASKS }, () => randomUUID());
    const sent: Array<{ task: string; n: number }> = [];
    const sends: Array<Promise<unknown>> = [];
    await producer.send({ topic: taskEventsTopic, acks: -1, messages: [taskEventMessage({ workspaceId: randomUUID(), kind: 'task.updated' }).message] });
    const total = RATE * (SLOW_SECONDS + FAST_SECONDS);
    const started = Date.now();
    let mostParked = 0;
    const calmSamples: number[] = [];
    let sampling = Promise.resolve();
    for (let tick = 0; tick < total; tick++) {
      if (tick === RATE * SLOW_SECONDS) slow = false;
      const task = tasks[tick % TASKS]!;
      sent.push({ task, n: tick });
      const event = taskEventMessage({ workspaceId, kind: 'task.updated', taskId: task, name: `n ${tick}` });
      sends.push(producer.send({ topic: taskEventsTopic, acks: -1, messages: [event.message] }));
      // Ten samples a second of what the endpoint has parked; those of the calm seconds are kept.
      if (tick % (RATE / 10) === 0) {
        const calm = tick >= total - RATE * CALM_SECONDS;
        sampling = sampling.then(async () => {
          const parked = await parkedNow();
          mostParked = Math.max(mostParked, parked);
          if (calm) calmSamples.push(parked);
        });
      }
      const next = started + ((tick + 1) * 1000) / RATE;
      await sleep(Math.max(0, next - Date.now()));
    }
    await Promise.all(sends);
    await sampling;

    // Every event arrives once, and each task's in event order (every attempt a first one: all answered 200).
    await receiver.waitFor(total, 120_000);
    const received = receiver.requests.map((request) => JSON.parse(request.body.toString('utf8')) as { data: { id: string; name: string } });
    expect(received).toHaveLength(total);
    const byTask = new Map<string, number[]>();
    for (const { data } of received) byTask.set(data.id, [...(byTask.get(data.id) ?? []), Number(data.name.slice(2))]);
    for (const task of tasks) {
      const expected = sent.filter((event) => event.task === task).map((event) => event.n);
      expect(byTask.get(task)).toEqual(expected);
    }
    console.log(
      `backlog exit: ${total} events over ${TASKS} tasks at ${RATE}/s; the endpoint slow for ${SLOW_SECONDS} s: up to ${mostParked} parked; ` +
        `parked in the last ${CALM_SECONDS} s of the feed (10 samples a second): ${calmSamples.join(' ')}`,
    );
    // The slow seconds parked deliveries (the backlog this test is about), and the calm ones none.
    expect(mostParked).toBeGreaterThan(50);
    expect(calmSamples).toHaveLength(CALM_SECONDS * 10);
    expect(calmSamples.every((parked) => parked === 0)).toBe(true);
  }, 240_000);
});
