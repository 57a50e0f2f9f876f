import { randomBytes, randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { verify } from '@octokit/webhooks-methods';
import { callUnary } from '@tws/common';
import { taskEventsTopic } from '@tws/contracts';
import { startStack, type Stack } from '@tws/devstack';
import { loadWebhooksProto } from '@tws/proto-types';
import type { WebhooksServiceClient } from '@tws/proto-types/generated/webhooks/v1/WebhooksService';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pollUntil } from '../support/fixtures.js';
import { testServiceEnv } from '../support/test-env.js';
import { taskEventMessage } from '../support/webhooks/fixtures.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/webhooks/receiver.js';

const endpointCount = 300;
type Instance = Stack['services']['instances'][number];

/**
 * Large fan-outs (issue #21 item 3) on a stack of its own, with batches of 10 and at most 100
 * fan-out deliveries in flight, so 300 endpoints (16 shards of ~19) take about 32 batches and several
 * rounds: one event reaches every endpoint exactly once with its own signature and log entry, another
 * workspace's event is not stuck behind it, and a stop mid-expansion loses and repeats nothing.
 */
describe('webhooks: one event to 300 endpoints of a workspace, in batches', () => {
  const { webhooks } = inject('stack');
  let stack: Stack;
  let client: WebhooksServiceClient;
  let kafka: Kafka;
  let db: pg.Client;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    stack = await startStack({
      label: 'webhooks-fanout',
      extraEnv: { ...testServiceEnv, ...webhooks.serviceEnv, WEBHOOK_FANOUT_BATCH_SIZE: '10', WEBHOOK_FANOUT_MAX_IN_FLIGHT: '100' },
    });
    connect(stack.services.instances.find((candidate) => candidate.name === 'webhooks')!);
    kafka = new Kafka({ clientId: 'webhooks-fanout-test', brokers: stack.infra.kafkaBrokers, logLevel: logLevel.NOTHING });
    db = new pg.Client({ connectionString: stack.infra.databaseUrl });
    await db.connect();
  }, 240_000);

  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    client?.close();
    await db?.end();
    await stack?.stop();
  }, 120_000);

  function connect(instance: Instance): void {
    client?.close();
    client = new (loadWebhooksProto().webhooks.v1.WebhooksService)(`127.0.0.1:${instance.grpcPort}`, grpc.credentials.createInsecure());
  }

  async function receiver(delayMs: number): Promise<TestReceiver> {
    const started = await startReceiver({ reply: () => ({ status: 200, delayMs }) });
    receivers.push(started);
    return started;
  }

  /** `count` endpoints on one receiver, each with its own path and secret. */
  async function workspaceWith(count: number, target: TestReceiver) {
    const workspaceId = randomUUID();
    const secrets = new Map<string, string>();
    for (let start = 0; start < count; start += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, count - start) }, async (_, offset) => {
          const path = `/e/${start + offset}`;
          const secret = `whsec_${randomBytes(12).toString('hex')}`;
          secrets.set(path, secret);
          await callUnary(client, client.CreateEndpoint, { workspaceId, url: `${target.origin}${path}`, secret, events: [] });
        }),
      );
    }
    return { workspaceId, secrets };
  }

  async function publish(workspaceId: string) {
    const event = taskEventMessage({ workspaceId, kind: 'task.updated' });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: taskEventsTopic, acks: -1, messages: [event.message] });
    await producer.disconnect();
    return event.payload.id;
  }

  /** Every request is signed with its own endpoint's secret (both the contract's and the body's event id). */
  async function expectSigned(requests: ReceivedRequest[], secrets: Map<string, string>, eventId: string): Promise<void> {
    for (const request of requests) {
      const secret = secrets.get(request.path);
      expect(secret, request.path).toBeDefined();
      expect(await verify(secret!, request.body.toString('utf8'), String(request.headers['x-service-signature']))).toBe(true);
      expect(request.headers['x-service-delivery']).toBe(eventId);
    }
  }

  /** State and attempts of the event's deliveries: one per endpoint, each succeeded with one logged attempt. */
  async function deliveryLog(eventId: string) {
    const { rows } = await db.query<{ state: string; attempts: number; deliveries: number }>(
      `SELECT d.state, count(DISTINCT d.id)::int AS deliveries, count(a.id)::int AS attempts
       FROM webhooks.deliveries d LEFT JOIN webhooks.attempts a ON a.delivery_id = d.id
       WHERE d.event_id = $1 GROUP BY d.state ORDER BY d.state`,
      [eventId],
    );
    return rows;
  }

  const paths = (requests: ReceivedRequest[]) => requests.map((request) => request.path);

  it('delivers once to every endpoint, each signed with its own secret and logged, while another workspace’s event overtakes it', async () => {
    const big = await receiver(250);
    const { workspaceId, secrets } = await workspaceWith(endpointCount, big);
    const other = await receiver(0);
    const otherWorkspace = await workspaceWith(1, other);

    const eventId = await publish(workspaceId);
    await big.waitFor(1, 30_000);
    const otherEventId = await publish(otherWorkspace.workspaceId);
    const [otherRequest] = await other.waitFor(1, 30_000);
    await big.waitFor(endpointCount, 60_000);

    // Not stuck behind the fan-out: the other workspace's event arrived before its last delivery.
    expect(otherRequest!.receivedAt).toBeLessThan(Math.max(...big.requests.map((request) => request.receivedAt)));
    await expectSigned([otherRequest!], otherWorkspace.secrets, otherEventId);
    const log = await pollUntil(() => deliveryLog(eventId), (rows) => rows.length === 1 && rows[0]?.state === 'succeeded', { timeoutMs: 20_000 });
    expect(log).toEqual([{ state: 'succeeded', deliveries: endpointCount, attempts: endpointCount }]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(new Set(paths(big.requests)).size).toBe(endpointCount);
    expect(big.requests).toHaveLength(endpointCount);
    await expectSigned(big.requests, secrets, eventId);
    const { rows } = await db.query('SELECT event_id FROM webhooks.fanouts WHERE event_id = $1', [eventId]);
    expect(rows).toEqual([]);
  }, 90_000);

  async function stopMidExpansion(stop: (instance: Instance) => Promise<void>) {
    const target = await receiver(100);
    const { workspaceId, secrets } = await workspaceWith(endpointCount, target);
    const eventId = await publish(workspaceId);
    await target.waitFor(60, 30_000);
    const instance = stack.services.instances.filter((candidate) => candidate.name === 'webhooks').at(-1)!;
    await stop(instance);
    const receivedBefore = new Set(paths(target.requests)).size;
    connect(await stack.services.startReplica('webhooks'));
    // Every delivery created and succeeded: between two batches of the expansion, the ones created so far may all be done.
    const log = await pollUntil(
      () => deliveryLog(eventId),
      (rows) => rows.length === 1 && rows[0]?.state === 'succeeded' && rows[0].deliveries === endpointCount,
      { timeoutMs: 60_000 },
    );
    expect(log).toEqual([{ state: 'succeeded', deliveries: endpointCount, attempts: expect.any(Number) as number }]);
    expect(new Set(paths(target.requests)).size).toBe(endpointCount);
    await expectSigned(target.requests, secrets, eventId);
    return { receivedBefore, duplicates: target.requests.length - endpointCount, attempts: log[0]!.attempts };
  }

  it('SIGTERM mid-expansion: the batches started finish and move the cursor, the new replica resumes after them (no duplicate)', async () => {
    const { receivedBefore, duplicates, attempts } = await stopMidExpansion((instance) => instance.process.stop());
    expect(receivedBefore).toBeLessThan(endpointCount);
    expect(duplicates).toBe(0);
    expect(attempts).toBe(endpointCount);
  }, 120_000);

  it('SIGKILL mid-expansion: nothing lost; only attempts in flight at the kill (at most the in-flight cap) can repeat', async () => {
    const { receivedBefore, duplicates } = await stopMidExpansion(async (instance) => {
      await instance.process.kill();
      // The dead replica's workspace lease would lapse after 15 s (FanOutStore.lease is tested beside the
      // store); expire it now so the suite stays short.
      await db.query('UPDATE webhooks.fanout_leases SET expires_at = now()');
    });
    expect(receivedBefore).toBeLessThan(endpointCount);
    expect(duplicates).toBeLessThanOrEqual(100);
  }, 120_000);
});
