import { randomBytes } from 'node:crypto';
import { setDnsRecord } from '@tws/devstack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import { createProject, createTask, keyOf, patchTask, pollUntil, TIMESTAMP, type CreatedProject } from '../support/fixtures.js';
import { registerWebhook, waitForDeliveryLog, type Webhook } from '../support/webhooks/fixtures.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/webhooks/receiver.js';
import { verifyBoth } from '../support/webhooks/standard.js';

const { webhooks, databaseUrl } = inject('stack');

/** GET /v1/webhooks items with the additive administration fields. */
interface AdminWebhook extends Webhook {
  enabled: boolean;
  disabledAt: string | null;
  disabledReason: 'manual' | 'failing' | null;
  previousSecretExpiresAt: string | null;
}

const header = (request: ReceivedRequest | undefined, name: string): string => String(request?.headers[name]);
const eventOf = (request: ReceivedRequest): string => header(request, 'x-service-event');
const secretOf = (): string => `whsec_${randomBytes(18).toString('base64')}`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('webhook administration: rotation, PATCH, test ping (issue #18)', () => {
  const receivers: TestReceiver[] = [];
  let db: pg.Client;

  async function receiver(options: Parameters<typeof startReceiver>[0] = {}): Promise<TestReceiver> {
    const started = await startReceiver({ reply: () => 204, ...options });
    receivers.push(started);
    return started;
  }

  /** A workspace of its own per test: its endpoints see only the events the test makes. */
  async function isolated(): Promise<{ key: Credentials; project: CreatedProject }> {
    const key = keyOf(await createWorkspace());
    return { key, project: await createProject(key) };
  }

  async function listed(key: Credentials, id: string): Promise<AdminWebhook> {
    const response = await api<AdminWebhook[]>('GET', '/v1/webhooks', { credentials: key });
    expect(response.status).toBe(200);
    const found = response.body.find((webhook) => webhook.id === id);
    if (!found) throw new Error(`webhook ${id} not listed`);
    return found;
  }

  const patch = (key: Credentials, id: string, body: unknown) => api<AdminWebhook & { error?: string }>('PATCH', `/v1/webhooks/${id}`, { credentials: key, body });
  const rotate = (key: Credentials, id: string, body: unknown) =>
    api<AdminWebhook & { error?: string }>('POST', `/v1/webhooks/${id}/rotate-secret`, { credentials: key, body });

  beforeAll(async () => {
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await Promise.all(receivers.map((started) => started.close()));
    await db?.end();
  });

  it('rotation: both Standard Webhooks signatures verify during the overlap, the contract header uses the new secret; afterwards only the new one, and the old is deleted', async () => {
    const own = await isolated();
    const [first, second, third] = [secretOf(), secretOf(), secretOf()];
    const hooks = await receiver();
    const webhook = await registerWebhook(own.key, { url: `${hooks.origin}/rotate`, secret: first });

    // Default overlap: 24 hours; the secret is never in the answer.
    const rotated = await rotate(own.key, webhook.id, { secret: second });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.text).not.toContain(second);
    expect(rotated.body).toMatchObject({ id: webhook.id, enabled: true, disabledAt: null, disabledReason: null });
    expect(rotated.body.previousSecretExpiresAt).toMatch(TIMESTAMP);
    const overlapMs = Date.parse(rotated.body.previousSecretExpiresAt ?? '') - Date.now();
    expect(overlapMs).toBeGreaterThan(86_400_000 - 60_000);
    expect(overlapMs).toBeLessThanOrEqual(86_400_000);

    const task = await createTask(own.key, { projectId: own.project.id, listId: own.project.defaultListId });
    const [during] = await hooks.waitFor(1);
    expect(header(during, 'webhook-signature')).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifyBoth(second, during!)).toEqual({ contract: true, standard: 'ok' });
    expect(verifyBoth(first, during!)).toEqual({ contract: false, standard: 'ok' });
    expect(verifyBoth(third, during!)).toEqual({ contract: false, standard: 'No matching signature found' });

    // A short overlap: the second secret signs for 2 s more, then only the third one.
    const short = await rotate(own.key, webhook.id, { secret: third, overlapSeconds: 2 });
    expect(short.status, short.text).toBe(200);
    await patchTask(own.key, task.id, { name: 'renamed during the short overlap' });
    const [, inShort] = await hooks.waitFor(2);
    expect(verifyBoth(third, inShort!)).toEqual({ contract: true, standard: 'ok' });
    expect(verifyBoth(second, inShort!)).toEqual({ contract: false, standard: 'ok' });
    // The first secret was replaced as "previous" by the second rotation.
    expect(verifyBoth(first, inShort!).standard).toBe('No matching signature found');

    await sleep(2_500);
    await patchTask(own.key, task.id, { name: 'renamed after the overlap' });
    const [, , after] = await hooks.waitFor(3);
    expect(header(after, 'webhook-signature')).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifyBoth(third, after!)).toEqual({ contract: true, standard: 'ok' });
    expect(verifyBoth(second, after!)).toEqual({ contract: false, standard: 'No matching signature found' });

    // Deleted from the database (the upkeep job runs every 5 s), and no longer listed.
    const stored = await pollUntil(
      async () => (await db.query('SELECT previous_secret_ciphertext, previous_secret_expires_at FROM webhooks.endpoints WHERE id = $1', [webhook.id])).rows[0],
      (row) => row?.previous_secret_ciphertext === null,
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    expect(stored).toEqual({ previous_secret_ciphertext: null, previous_secret_expires_at: null });
    expect((await listed(own.key, webhook.id)).previousSecretExpiresAt).toBeNull();

    // overlapSeconds 0: the previous secret is gone at once.
    const fourth = secretOf();
    expect((await rotate(own.key, webhook.id, { secret: fourth, overlapSeconds: 0 })).body.previousSecretExpiresAt).toBeNull();
    await patchTask(own.key, task.id, { name: 'after an immediate rotation' });
    const [, , , immediate] = await hooks.waitFor(4);
    expect(verifyBoth(fourth, immediate!)).toEqual({ contract: true, standard: 'ok' });
    expect(verifyBoth(third, immediate!)).toEqual({ contract: false, standard: 'No matching signature found' });
  }, 60_000);

  it('rotation refuses bad input with 400 and unknown or foreign endpoints with 404', async () => {
    const own = await isolated();
    const other = await isolated();
    const hooks = await receiver();
    const webhook = await registerWebhook(own.key, { url: `${hooks.origin}/`, secret: 'one' });
    for (const body of [{}, { secret: '' }, { secret: 'x'.repeat(1025) }, { secret: 'n', overlapSeconds: 604_801 }, { secret: 'n', overlapSeconds: -1 }, { secret: 'n', overlapSeconds: 1.5 }, { secret: 'n', extra: 1 }]) {
      const response = await rotate(own.key, webhook.id, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(response.body)).toEqual(['error']);
    }
    expect((await rotate(own.key, webhook.id, { secret: 'n', overlapSeconds: 604_800 })).status).toBe(200);
    expect((await rotate(other.key, webhook.id, { secret: 'n' })).status).toBe(404);
    expect((await rotate(own.key, '00000000-0000-4000-8000-000000000000', { secret: 'n' })).status).toBe(404);
    expect((await rotate(own.key, 'not-an-id', { secret: 'n' })).status).toBe(404);
  });

  it('PATCH url: the same SSRF and https rules as POST; a new url takes effect', async () => {
    const own = await isolated();
    const [before, after] = [await receiver(), await receiver()];
    const webhook = await registerWebhook(own.key, { url: `${before.origin}/a`, secret: 's' });
    const privateName = `admin-private-${process.pid}.${webhooks.domain}`;
    await setDnsRecord(webhooks.dnsControlUrl, privateName, { a: ['10.0.0.7'] });
    try {
      for (const [url, message] of [
        ['http://example.com/hook', /https/],
        ['https://localhost/hook', /localhost/],
        ['https://127.0.0.1/hook', /disallowed address/],
        ['https://[::1]/hook', /disallowed address/],
        ['https://169.254.169.254/latest', /disallowed address/],
        [`https://${privateName}/hook`, /^url resolves to a disallowed address$/],
        ['https://nothing-here.nowhere.test/hook', /^host does not resolve$/],
        ['', /.+/],
      ] as const) {
        const response = await patch(own.key, webhook.id, { url });
        expect(response.status, url).toBe(400);
        expect(response.body.error).toMatch(message);
      }
    } finally {
      await setDnsRecord(webhooks.dnsControlUrl, privateName, undefined);
    }
    expect((await listed(own.key, webhook.id)).url).toBe(`${before.origin}/a`);

    const changed = await patch(own.key, webhook.id, { url: `${after.origin}/b` });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toEqual({
      id: webhook.id,
      url: `${after.origin}/b`,
      events: ['task.created', 'task.updated', 'task.completed'],
      createdAt: expect.stringMatching(TIMESTAMP),
      enabled: true,
      disabledAt: null,
      disabledReason: null,
      previousSecretExpiresAt: null,
    });
    await createTask(own.key, { projectId: own.project.id, listId: own.project.defaultListId });
    const [request] = await after.waitFor(1);
    expect(request?.path).toBe('/b');
    expect(before.requests).toHaveLength(0);
  });

  it('PATCH events and enabled: an events change takes effect; a disabled endpoint gets nothing until re-enabled', async () => {
    const own = await isolated();
    const [control, filtered] = [await receiver(), await receiver()];
    await registerWebhook(own.key, { url: `${control.origin}/`, secret: 'c' });
    const webhook = await registerWebhook(own.key, { url: `${filtered.origin}/`, secret: 'f' });

    for (const body of [{}, { events: [] }, { events: ['task.deleted'] }, { enabled: 'no' }, { secret: 'x' }, { url: 'https://x.example', other: 1 }]) {
      const response = await patch(own.key, webhook.id, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(response.body)).toEqual(['error']);
    }
    expect((await patch(own.key, '00000000-0000-4000-8000-000000000000', { enabled: true })).status).toBe(404);

    const onlyCompleted = await patch(own.key, webhook.id, { events: ['task.completed', 'task.completed'] });
    expect(onlyCompleted.status, onlyCompleted.text).toBe(200);
    expect(onlyCompleted.body.events).toEqual(['task.completed']);
    const task = await createTask(own.key, { projectId: own.project.id, listId: own.project.defaultListId });
    await patchTask(own.key, task.id, { isCompleted: true });
    await control.waitFor(2);
    await filtered.waitFor(1);
    expect(filtered.requests.map(eventOf)).toEqual(['task.completed']);

    const disabled = await patch(own.key, webhook.id, { enabled: false, events: ['task.updated'] });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ enabled: false, disabledReason: 'manual', events: ['task.updated'] });
    expect(disabled.body.disabledAt).toMatch(TIMESTAMP);
    expect(await listed(own.key, webhook.id)).toEqual(disabled.body);
    await patchTask(own.key, task.id, { name: 'while disabled' });
    await control.waitFor(3);
    await sleep(1_000);
    expect(filtered.requests).toHaveLength(1);

    const enabled = await patch(own.key, webhook.id, { enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, disabledAt: null, disabledReason: null });
    await patchTask(own.key, task.id, { name: 'enabled again' });
    await control.waitFor(4);
    await filtered.waitFor(2);
    expect(filtered.requests.map(eventOf)).toEqual(['task.completed', 'task.updated']);
    expect(JSON.parse(filtered.requests[1]!.body.toString('utf8')).data.name).toBe('enabled again');
  });

  it('POST /test: a signed ping to that endpoint only, whatever its events, retried and logged like any delivery', async () => {
    const own = await isolated();
    const secret = secretOf();
    const [bystander, flaky] = [await receiver(), await receiver({ reply: (n) => (n === 1 ? 503 : 204) })];
    await registerWebhook(own.key, { url: `${bystander.origin}/`, secret: 'b' });
    const webhook = await registerWebhook(own.key, { url: `${flaky.origin}/ping`, secret, events: ['task.completed'] });

    const accepted = await api<{ id: string; deliveryId: string }>('POST', `/v1/webhooks/${webhook.id}/test`, { credentials: own.key });
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.body).toEqual({ id: expect.stringMatching(/^evt_[0-9a-f-]{36}$/), deliveryId: expect.any(String) });

    const [first, second] = await flaky.waitFor(2, 20_000);
    for (const request of [first!, second!]) {
      expect(eventOf(request)).toBe('ping');
      expect(header(request, 'x-service-delivery')).toBe(accepted.body.id);
      expect(header(request, 'webhook-id')).toBe(accepted.body.id);
      expect(verifyBoth(secret, request)).toEqual({ contract: true, standard: 'ok' });
    }
    const payload = JSON.parse(first!.body.toString('utf8')) as Record<string, unknown>;
    expect(payload).toEqual({ id: accepted.body.id, event: 'ping', createdAt: expect.stringMatching(TIMESTAMP), data: { webhookId: webhook.id } });
    expect(Object.keys(payload)).toEqual(['id', 'event', 'createdAt', 'data']);
    expect(second!.body.equals(first!.body)).toBe(true);

    const [logged] = await waitForDeliveryLog(own.key, webhook.id, (log) => log[0]?.status === 'succeeded', 20_000);
    expect(logged).toMatchObject({ id: accepted.body.deliveryId, eventId: accepted.body.id, event: 'ping', status: 'succeeded', redeliveryOf: null });
    expect(logged?.attempts.map((attempt) => [attempt.attempt, attempt.outcome, attempt.statusCode])).toEqual([
      [1, 'failed', 503],
      [2, 'succeeded', 204],
    ]);
    expect(bystander.requests).toHaveLength(0);

    // Also while disabled (checking a receiver before re-enabling it); never for another workspace.
    expect((await patch(own.key, webhook.id, { enabled: false })).status).toBe(200);
    expect((await api('POST', `/v1/webhooks/${webhook.id}/test`, { credentials: own.key })).status).toBe(202);
    await flaky.waitFor(3, 20_000);
    const other = await isolated();
    const foreign = await api('POST', `/v1/webhooks/${webhook.id}/test`, { credentials: other.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'webhook not found' });
    expect(bystander.requests).toHaveLength(0);
  }, 60_000);
});
