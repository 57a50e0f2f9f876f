import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import { createProject, createTask, keyOf, patchTask, type CreatedProject } from '../support/fixtures.js';
import { setDnsRecord } from '@tws/devstack';
import { findOnTopic, registerWebhook, waitForDeliveryLog, type DeliveryLog } from '../support/webhooks/fixtures.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';
import { deadLetterTopic } from '@tws/contracts';

const stack = inject('stack');
const { webhooks } = stack;
const delay = webhooks.retryDelayMs;
const secretOf = (): string => `whsec_${randomBytes(18).toString('base64url')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`webhook retries (delays ${webhooks.retryDelays} instead of 5m,30m,2h,8h)`, () => {
  let workspace: TestWorkspace;
  let key: Credentials;
  let project: CreatedProject;
  const receivers: TestReceiver[] = [];
  let db: pg.Client;

  beforeAll(async () => {
    workspace = await createWorkspace();
    key = keyOf(workspace);
    project = await createProject(key);
    db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await db.end();
  });

  async function receiver(options: Parameters<typeof startReceiver>[0] = {}): Promise<TestReceiver> {
    const started = await startReceiver(options);
    receivers.push(started);
    return started;
  }

  /** A workspace of its own per test, so each endpoint sees only the events the test makes. */
  async function isolated(): Promise<{ key: Credentials; project: CreatedProject }> {
    const own = await createWorkspace();
    return { key: keyOf(own), project: await createProject(keyOf(own)) };
  }

  it('a receiver failing twice then answering 2xx gets attempts 1–3 with the same delivery id at the configured delays', async () => {
    const flaky = await receiver({ reply: (n) => (n <= 2 ? 503 : 204) });
    const webhook = await registerWebhook(key, { url: `${flaky.origin}/flaky`, secret: secretOf() });
    await createTask(key, { projectId: project.id, listId: project.defaultListId });

    const requests = await flaky.waitFor(3, 20_000);
    const ids = new Set(requests.map((request) => request.headers['x-service-delivery']));
    expect(ids.size).toBe(1);
    expect(new Set(requests.map((request) => request.body.toString('base64'))).size).toBe(1);
    expect(new Set(requests.map((request) => request.headers['x-service-signature'])).size).toBe(1);
    for (const [previous, next] of [
      [requests[0]!, requests[1]!],
      [requests[1]!, requests[2]!],
    ] as const) {
      const gap = next.receivedAt - previous.receivedAt;
      expect(gap).toBeGreaterThanOrEqual(delay - 50);
      expect(gap).toBeLessThan(delay + 2_500);
    }

    const [delivery] = await waitForDeliveryLog(key, webhook.id, (log) => log[0]?.status === 'succeeded');
    expect(delivery?.eventId).toBe([...ids][0]);
    expect(delivery?.attempts.map((attempt) => [attempt.attempt, attempt.outcome, attempt.statusCode])).toEqual([
      [1, 'failed', 503],
      [2, 'failed', 503],
      [3, 'succeeded', 204],
    ]);
    expect(delivery?.attempts[0]?.error).toBe('HTTP 503');
    await sleep(delay + 1_000);
    expect(flaky.requests).toHaveLength(3);
  });

  it('a receiver that always fails gets exactly 5 attempts; the delivery is then permanently failed and on webhooks.dead', async () => {
    const broken = await receiver({ reply: () => 500 });
    const webhook = await registerWebhook(key, { url: `${broken.origin}/broken`, secret: secretOf() });
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });

    const requests = await broken.waitFor(5, 30_000);
    expect(new Set(requests.map((request) => request.headers['x-service-delivery'])).size).toBe(1);
    const [delivery] = await waitForDeliveryLog(key, webhook.id, (log) => log[0]?.status === 'failed');
    expect(delivery?.attempts.map((attempt) => [attempt.attempt, attempt.outcome, attempt.statusCode])).toEqual(
      [1, 2, 3, 4, 5].map((attempt) => [attempt, 'failed', 500]),
    );
    expect(delivery?.nextAttemptAt).toBeNull();

    const dead = await findOnTopic(deadLetterTopic, (message) => message.headers['delivery-id'] === delivery?.id);
    expect(dead.headers).toMatchObject({ 'event-id': delivery?.eventId, attempt: '5', 'event-type': 'task.created', 'workspace-id': workspace.workspace.id });
    expect(JSON.parse(dead.value)).toMatchObject({
      deliveryId: delivery?.id,
      eventId: delivery?.eventId,
      endpointId: webhook.id,
      attempts: 5,
      lastStatusCode: 500,
      payload: { id: delivery?.eventId, event: 'task.created', data: { id: task.id } },
    });

    await sleep(2 * delay + 1_000);
    expect(broken.requests).toHaveLength(5);
    const ops = stack.services.find((service) => service.name === 'webhooks')?.opsUrl;
    const metrics = await (await fetch(`${ops}/metrics`)).text();
    expect(metrics).toMatch(/webhook_deliveries_dead_total\{service="webhooks"\} [1-9]/);
    expect(metrics).toMatch(/webhook_deliveries_total\{result="failed",attempt="5",service="webhooks"\} [1-9]/);
  });

  it('deleting the endpoint stops its pending retries', async () => {
    const own = await isolated();
    const broken = await receiver({ reply: () => 500 });
    const webhook = await registerWebhook(own.key, { url: `${broken.origin}/`, secret: secretOf() });
    await createTask(own.key, { projectId: own.project.id, listId: own.project.defaultListId });
    await broken.waitFor(1);
    expect((await api('DELETE', `/v1/webhooks/${webhook.id}`, { credentials: own.key })).status).toBe(204);
    await sleep(2 * delay + 1_500);
    expect(broken.requests).toHaveLength(1);
    const { rows } = await db.query<{ state: string }>('SELECT state FROM webhooks.deliveries WHERE endpoint_id = $1', [webhook.id]);
    expect(rows).toEqual([{ state: 'cancelled' }]);
    expect((await api('GET', `/v1/webhooks/${webhook.id}/deliveries`, { credentials: own.key })).status).toBe(404);
  });

  it('redelivers on request: a new attempt chain with the same event id, listed first', async () => {
    const own = await isolated();
    const hooks = await receiver();
    const webhook = await registerWebhook(own.key, { url: `${hooks.origin}/`, secret: secretOf() });
    await createTask(own.key, { projectId: own.project.id, listId: own.project.defaultListId });
    const [first] = await hooks.waitFor(1);
    const [original] = await waitForDeliveryLog(own.key, webhook.id, (log) => log[0]?.status === 'succeeded');

    const response = await api<DeliveryLog>('POST', `/v1/webhooks/${webhook.id}/deliveries/${original?.id}/redeliver`, {
      credentials: own.key,
    });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ eventId: original?.eventId, redeliveryOf: original?.id, status: 'pending', attempts: [] });
    expect(response.body.id).not.toBe(original?.id);

    const [, again] = await hooks.waitFor(2);
    expect(again?.headers['x-service-delivery']).toBe(first?.headers['x-service-delivery']);
    expect(again?.body.equals(first!.body)).toBe(true);
    const log = await waitForDeliveryLog(own.key, webhook.id, (entries) => entries[0]?.status === 'succeeded' && entries.length === 2);
    expect(log.map((entry) => entry.id)).toEqual([response.body.id, original?.id]);

    const missing = await api('POST', `/v1/webhooks/${webhook.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`, {
      credentials: own.key,
    });
    expect(missing.status).toBe(404);
  });

  it('a host whose DNS answer changes to a blocked address after registration gets nothing; the attempt is logged as blocked', async () => {
    const own = await isolated();
    const name = `rebind-${randomBytes(4).toString('hex')}`;
    // Listens on the allow-listed address and on the one DNS will switch to, so a leak would show.
    const target = await receiver({ name, addresses: [webhooks.receiverAddress, webhooks.rebindAddress] });
    const webhook = await registerWebhook(own.key, { url: `${target.origin}/`, secret: secretOf() });
    const task = await createTask(own.key, { projectId: own.project.id, listId: own.project.defaultListId });
    await target.waitFor(1);

    await setDnsRecord(webhooks.dnsControlUrl, target.host, { a: [webhooks.rebindAddress] });
    try {
      await patchTask(own.key, task.id, { name: 'after the rebinding' });
      const log = await waitForDeliveryLog(own.key, webhook.id, (entries) => entries.length === 2 && entries[0]!.attempts.length >= 1);
      expect(log[0]?.attempts[0]).toMatchObject({ attempt: 1, outcome: 'blocked', statusCode: null });
      // The delivery log tells only that the address is not allowed, never what the name resolved to.
      expect(log[0]?.attempts[0]?.error).toBe('url resolves to a disallowed address');
      expect(log[0]?.status).toBe('pending');
      await sleep(500);
      expect(target.requests).toHaveLength(1);

      // Registration is refused too now.
      const again = await api('POST', '/v1/webhooks', { credentials: own.key, body: { url: `${target.origin}/`, secret: 'x' } });
      expect(again.status).toBe(400);
    } finally {
      await setDnsRecord(webhooks.dnsControlUrl, target.host, undefined);
    }
  });
});
