import { randomBytes } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import type { Credentials } from '../support/api.js';
import { createProject, createTask, keyOf, patchTask, TIMESTAMP, type CreatedProject } from '../support/fixtures.js';
import { listDeliveries, registerWebhook, waitForDeliveryLog } from '../support/webhooks/fixtures.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/webhooks/receiver.js';

const EVENT_ID = /^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DATA_KEYS = ['assigneeId', 'createdAt', 'id', 'isCompleted', 'labels', 'listId', 'name', 'number', 'projectId', 'statusId'];
const secretOf = (): string => `whsec_${randomBytes(18).toString('base64url')}`;

interface Payload {
  id: string;
  event: string;
  createdAt: string;
  data: Record<string, unknown> & { id: string; name: string };
}
const payloadOf = (request: ReceivedRequest): Payload => JSON.parse(request.body.toString('utf8')) as Payload;

describe('webhook delivery through the API (task change → signed POST)', () => {
  let workspace: TestWorkspace;
  let key: Credentials;
  let project: CreatedProject;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    workspace = await createWorkspace();
    key = keyOf(workspace);
    project = await createProject(key);
  });

  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  async function receiver(options: Parameters<typeof startReceiver>[0] = {}): Promise<TestReceiver> {
    const started = await startReceiver(options);
    receivers.push(started);
    return started;
  }

  it('delivers each kind with the contract headers, a signature an independent implementation accepts, and the exact payload', async () => {
    const hooks = await receiver();
    const secret = secretOf();
    await registerWebhook(key, { url: `${hooks.origin}/hooks/tws?source=test`, secret });

    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'Ship it' });
    await patchTask(key, task.id, { name: 'Ship it now', description: 'never in the payload' });
    await patchTask(key, task.id, { isCompleted: true });

    const requests = await hooks.waitFor(3);
    expect(requests.map((request) => request.headers['x-service-event'])).toEqual(['task.created', 'task.updated', 'task.completed']);
    for (const request of requests) {
      const raw = request.body.toString('utf8');
      const payload = payloadOf(request);
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/hooks/tws?source=test');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['user-agent']).toBe('Service-Webhook/1.0');
      expect(request.headers.host).toBe(`${hooks.host}:${hooks.port}`);
      expect(request.headers['x-service-event']).toBe(payload.event);
      expect(request.headers['x-service-delivery']).toBe(payload.id);
      const signature = request.headers['x-service-signature'];
      expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(await verify(secret, raw, String(signature))).toBe(true);
      expect(await verify(`${secret}x`, raw, String(signature))).toBe(false);

      expect(Object.keys(payload).sort()).toEqual(['createdAt', 'data', 'event', 'id']);
      expect(payload.id).toMatch(EVENT_ID);
      expect(payload.createdAt).toMatch(TIMESTAMP);
      expect(Object.keys(payload.data).sort()).toEqual(DATA_KEYS);
      expect(payload.data).toMatchObject({ id: task.id, number: task.number, listId: project.defaultListId, projectId: project.id });
      expect(raw).not.toContain('never in the payload');
    }
    expect(payloadOf(requests[0]!).data).toMatchObject({ name: 'Ship it', isCompleted: false });
    expect(payloadOf(requests[1]!).data).toMatchObject({ name: 'Ship it now', isCompleted: false });
    expect(payloadOf(requests[2]!).data).toMatchObject({ name: 'Ship it now', isCompleted: true });
    expect(new Set(requests.map((request) => request.headers['x-service-delivery'])).size).toBe(3);
  });

  it('sends only the subscribed kinds, and only to endpoints of the workspace', async () => {
    const completedOnly = await receiver();
    const everything = await receiver();
    const elsewhere = await receiver();
    await registerWebhook(key, { url: `${completedOnly.origin}/`, secret: secretOf(), events: ['task.completed'] });
    await registerWebhook(key, { url: `${everything.origin}/`, secret: secretOf(), events: [] });
    const other = await createWorkspace();
    await registerWebhook(keyOf(other), { url: `${elsewhere.origin}/`, secret: secretOf() });

    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    await patchTask(key, task.id, { isCompleted: true });
    await patchTask(key, task.id, { isCompleted: false });

    const all = await everything.waitFor(3);
    expect(all.map((request) => request.headers['x-service-event'])).toEqual(['task.created', 'task.completed', 'task.updated']);
    const [completed] = await completedOnly.waitFor(1);
    expect(completed?.headers['x-service-delivery']).toBe(all[1]?.headers['x-service-delivery']);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(completedOnly.requests).toHaveLength(1);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('keeps a delivery log: every attempt with time, number, status and duration, newest delivery first, paginated', async () => {
    const logged = await receiver();
    const webhook = await registerWebhook(key, { url: `${logged.origin}/log`, secret: secretOf() });
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    await patchTask(key, task.id, { name: 'renamed once' });
    await patchTask(key, task.id, { name: 'renamed twice' });
    const requests = await logged.waitFor(3);

    const deliveries = await waitForDeliveryLog(key, webhook.id, (log) => log.length === 3 && log.every((d) => d.status === 'succeeded'));
    expect(deliveries.map((delivery) => delivery.eventId)).toEqual(requests.map((r) => r.headers['x-service-delivery']).reverse());
    for (const delivery of deliveries) {
      expect(delivery).toMatchObject({ status: 'succeeded', redeliveryOf: null, nextAttemptAt: null, createdAt: expect.stringMatching(TIMESTAMP) });
      expect(delivery.attempts).toEqual([
        { attempt: 1, attemptedAt: expect.stringMatching(TIMESTAMP), durationMs: expect.any(Number), outcome: 'succeeded', statusCode: 200, error: null },
      ]);
    }
    expect(deliveries.map((delivery) => delivery.event)).toEqual(['task.updated', 'task.updated', 'task.created']);

    const first = await listDeliveries(key, webhook.id, '?limit=2');
    expect(first.deliveries.map((delivery) => delivery.id)).toEqual(deliveries.slice(0, 2).map((delivery) => delivery.id));
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await listDeliveries(key, webhook.id, `?limit=2&cursor=${encodeURIComponent(first.nextCursor ?? '')}`);
    expect(second.deliveries.map((delivery) => delivery.id)).toEqual([deliveries[2]?.id]);
    expect(second.nextCursor).toBeNull();
  });

  it('a hanging endpoint does not delay deliveries to the others; first attempts per task keep event order', async () => {
    const stuck = await receiver({ reply: () => 'hang' });
    const fast = await receiver();
    await registerWebhook(key, { url: `${stuck.origin}/`, secret: secretOf() });
    await registerWebhook(key, { url: `${fast.origin}/`, secret: secretOf() });

    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'v0' });
    const started = Date.now();
    for (let version = 1; version <= 5; version++) await patchTask(key, task.id, { name: `v${version}` });
    const requests = await fast.waitFor(6, 8_000);
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(requests.map((request) => payloadOf(request).data.name)).toEqual(['v0', 'v1', 'v2', 'v3', 'v4', 'v5']);
    // The stuck endpoint got its first request and holds it; its later events wait behind it (same task).
    expect(stuck.requests.length).toBeGreaterThanOrEqual(1);
  });
});
