import { randomBytes, randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { verify } from '@octokit/webhooks-methods';
import { callUnary } from '@tws/common';
import { startStack, type Stack } from '@tws/devstack';
import { loadWebhooksProto } from '@tws/proto-types';
import type { WebhooksServiceClient } from '@tws/proto-types/generated/webhooks/v1/WebhooksService';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pollUntil } from '../support/fixtures.js';
import { testServiceEnv } from '../support/test-env.js';
import { taskEventMessage } from '../support/webhooks/fixtures.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';
import { taskEventsTopic } from '@tws/contracts';

/**
 * Crash and restart of the webhooks service mid-stream, on a stack of its own (the shared one keeps
 * its single replica). Events are published to task-events.v1 as the tasks service's relay does, and
 * the endpoint is registered over gRPC: this suite is about the webhooks service's own durability.
 */
describe('webhooks service restarts lose no delivery', () => {
  const { webhooks } = inject('stack');
  let stack: Stack;
  let client: WebhooksServiceClient;
  let kafka: Kafka;
  let db: pg.Client;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    stack = await startStack({ label: 'webhooks-restart', extraEnv: { ...testServiceEnv, ...webhooks.serviceEnv } });
    const instance = stack.services.instances.find((candidate) => candidate.name === 'webhooks');
    const proto = loadWebhooksProto();
    client = new proto.webhooks.v1.WebhooksService(`127.0.0.1:${instance?.grpcPort}`, grpc.credentials.createInsecure());
    kafka = new Kafka({ clientId: 'webhooks-restart-test', brokers: stack.infra.kafkaBrokers, logLevel: logLevel.NOTHING });
    db = new pg.Client({ connectionString: stack.infra.databaseUrl });
    await db.connect();
  }, 240_000);

  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    client?.close();
    await db?.end();
    await stack?.stop();
  }, 120_000);

  async function scenario(stop: (instance: Stack['services']['instances'][number]) => Promise<void>, replyDelayMs: number) {
    const secret = `whsec_${randomBytes(12).toString('hex')}`;
    // Some latency per request so the stop lands while deliveries are in flight.
    const receiver = await startReceiver({ reply: () => ({ status: 200, delayMs: replyDelayMs }) });
    receivers.push(receiver);
    const workspaceId = randomUUID();
    await callUnary(client, client.CreateEndpoint, { workspaceId, url: `${receiver.origin}/`, secret, events: [] });

    const tasks = Array.from({ length: 20 }, () => randomUUID());
    const events = Array.from({ length: 400 }, (_, index) =>
      taskEventMessage({ workspaceId, kind: 'task.updated', taskId: tasks[index % tasks.length], name: `change ${index}` }),
    );
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: taskEventsTopic, acks: -1, messages: events.map((event) => event.message) });
    await producer.disconnect();

    await receiver.waitFor(40, 30_000);
    const instance = stack.services.instances.filter((candidate) => candidate.name === 'webhooks').at(-1)!;
    await stop(instance);
    const receivedBeforeRestart = new Set(receiver.requests.map((request) => String(request.headers['x-service-delivery']))).size;
    const replacement = await stack.services.startReplica('webhooks');
    client.close();
    client = new (loadWebhooksProto().webhooks.v1.WebhooksService)(`127.0.0.1:${replacement.grpcPort}`, grpc.credentials.createInsecure());

    const expected = new Set(events.map((event) => event.payload.id));
    const deadline = Date.now() + 60_000;
    const distinct = () => new Set(receiver.requests.map((request) => String(request.headers['x-service-delivery'])));
    while (distinct().size < expected.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(distinct()).toEqual(expected);
    for (const request of receiver.requests) {
      expect(await verify(secret, request.body.toString('utf8'), String(request.headers['x-service-signature']))).toBe(true);
      expect(JSON.parse(request.body.toString('utf8')).id).toBe(request.headers['x-service-delivery']);
    }
    // A delivery the killed replica sent but never recorded is still pending when its id first reaches
    // the receiver: the new replica re-reads it from the uncommitted offset and sends it again.
    const deliveryStates = async () =>
      (
        await db.query<{ state: string; count: string }>(
          `SELECT d.state, count(*) FROM webhooks.deliveries d JOIN webhooks.endpoints e ON e.id = d.endpoint_id
           WHERE e.workspace_id = $1 GROUP BY d.state ORDER BY d.state`,
          [workspaceId],
        )
      ).rows;
    const settled = [{ state: 'succeeded', count: String(events.length) }];
    const states = await pollUntil(deliveryStates, (rows) => JSON.stringify(rows) === JSON.stringify(settled), {
      timeoutMs: Math.max(0, deadline - Date.now()),
    });
    expect(states).toEqual(settled);
    return { duplicates: receiver.requests.length - expected.size, receivedBeforeRestart, total: events.length };
  }

  it('SIGKILL mid-stream, then a new replica: every event delivered, duplicates only with the same id', async () => {
    const { duplicates, receivedBeforeRestart, total } = await scenario((instance) => instance.process.kill(), 15);
    // The crash really was mid-stream: the new replica had deliveries left to make.
    expect(receivedBeforeRestart).toBeLessThan(total);
    expect(duplicates).toBeGreaterThanOrEqual(0);
  }, 150_000);

  it('SIGTERM mid-stream: in-flight deliveries finish and commit, so the new replica sends no duplicate', async () => {
    // Everything fetched before the signal is finished during the drain (~2.5 s of receiver latency).
    const { duplicates } = await scenario((instance) => instance.process.stop(), 200);
    expect(duplicates).toBe(0);
  }, 150_000);
});
