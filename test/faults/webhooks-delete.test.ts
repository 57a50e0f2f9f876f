import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { startStack, type Stack } from '@tws/devstack';
import { loadWebhooksProto } from '@tws/proto-types';
import type { WebhooksServiceClient } from '@tws/proto-types/generated/webhooks/v1/WebhooksService';
import { Kafka, logLevel } from 'kafkajs';
import { installKafkaRequestQueueFix } from '@tws/common/kafka-request-queue';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testServiceEnv } from '../support/test-env.js';
import { taskEventMessage } from '../support/webhooks/fixtures.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';
import { taskEventsTopic } from '@tws/contracts';

// As in the services (createKafka): no 1 ms timer in each open kafkajs connection (kafka-request-queue.ts).
installKafkaRequestQueueFix();

/**
 * Issue #14, finding 3: deleting an endpoint stops its first attempts too, not only its retries, on
 * every replica. A stack of its own with two webhooks replicas (as the chart runs them): a burst to a
 * slow-ish endpoint (200 ms per answer) queues hundreds of first attempts in both replicas; the
 * DELETE goes to one of them; no request may reach the endpoint later than 1 s after it returned.
 */
describe('deleting a webhook endpoint stops its attempts on every replica', () => {
  const { webhooks } = inject('stack');
  let stack: Stack;
  const clients: WebhooksServiceClient[] = [];
  let kafka: Kafka;
  let db: pg.Client;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    stack = await startStack({ label: 'webhooks-delete', extraEnv: { ...testServiceEnv, ...webhooks.serviceEnv } });
    await stack.services.startReplica('webhooks');
    const proto = loadWebhooksProto();
    for (const instance of stack.services.instances.filter((candidate) => candidate.name === 'webhooks')) {
      clients.push(new proto.webhooks.v1.WebhooksService(`127.0.0.1:${instance.grpcPort}`, grpc.credentials.createInsecure()));
    }
    kafka = new Kafka({ clientId: 'webhooks-delete-test', brokers: stack.infra.kafkaBrokers, logLevel: logLevel.NOTHING });
    db = new pg.Client({ connectionString: stack.infra.databaseUrl });
    await db.connect();
  }, 240_000);

  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    for (const client of clients) client.close();
    await db?.end();
    await stack?.stop();
  }, 120_000);

  it('no attempt starts later than 1 s after DELETE returned, whichever replica holds the work', async () => {
    expect(clients).toHaveLength(2);
    const [first, second] = clients as [WebhooksServiceClient, WebhooksServiceClient];
    const receiver = await startReceiver({ reply: () => ({ status: 200, delayMs: 200 }) });
    receivers.push(receiver);
    const workspaceId = randomUUID();
    const secret = `whsec_${randomBytes(12).toString('hex')}`;
    const { endpoint } = await callUnary(first, first.CreateEndpoint, { workspaceId, url: `${receiver.origin}/`, secret, events: [] });

    // Let both replicas join the consumer group, so both own partitions of task-events.v1.
    await sleep(5_000);
    // One task per event: spread over every partition, so both replicas queue first attempts.
    const events = Array.from({ length: 3_000 }, (_, index) => taskEventMessage({ workspaceId, kind: 'task.created', name: `burst ${index}` }));
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: taskEventsTopic, acks: -1, messages: events.map((event) => event.message) });
    await producer.disconnect();

    await receiver.waitFor(150, 60_000);
    await callUnary(second, second.DeleteEndpoint, { workspaceId, endpointId: endpoint!.id });
    const deletedAt = Date.now();
    await sleep(4_000);

    const after = receiver.requests.filter((request) => request.receivedAt > deletedAt + 1_000).length;
    const afterDelete = receiver.requests.filter((request) => request.receivedAt > deletedAt).length;
    console.log(
      `delete mid-burst: ${receiver.requests.length} requests in all, ${afterDelete} arrived after DELETE returned, ` +
        `${after} later than 1 s after it`,
    );
    expect(after).toBe(0);
    // Nothing of the endpoint is left to attempt: every delivery finished or cancelled, none parked.
    const { rows } = await db.query<{ state: string; parked: boolean; count: string }>(
      'SELECT state, parked, count(*) FROM webhooks.deliveries WHERE endpoint_id = $1 GROUP BY state, parked ORDER BY state',
      [endpoint!.id],
    );
    console.log(`deliveries of the deleted endpoint: ${rows.map((row) => `${row.state}${row.parked ? ' (parked)' : ''} ${row.count}`).join(', ')}`);
    expect(rows.filter((row) => row.state === 'pending' || row.parked)).toEqual([]);
  }, 180_000);
});
