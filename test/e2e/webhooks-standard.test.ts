import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import { createProject, createTask, keyOf, patchTask, type CreatedProject } from '../support/fixtures.js';
import { registerWebhook, waitForDeliveryLog, type DeliveryLog } from '../support/webhooks/fixtures.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/webhooks/receiver.js';
import { replay, verifyBoth, verifyingReply, type Verdict } from '../support/webhooks/standard.js';

/** Secrets of both shapes: Standard Webhooks-looking (still keyed by its UTF-8 bytes) and plain non-ASCII. */
const whsecOf = (): string => `whsec_${randomBytes(24).toString('base64')}`;
const plainOf = (): string => `clé ✓ ${randomBytes(8).toString('hex')}`;
const header = (request: ReceivedRequest | undefined, name: string): string => String(request?.headers[name]);

describe('Standard Webhooks headers on deliveries (webhook-id, webhook-timestamp, webhook-signature)', () => {
  const receivers: TestReceiver[] = [];

  async function receiver(options: Parameters<typeof startReceiver>[0]): Promise<TestReceiver> {
    const started = await startReceiver(options);
    receivers.push(started);
    return started;
  }

  /** A workspace of its own per test, so each endpoint sees only the events the test makes. */
  async function isolated(): Promise<{ key: Credentials; project: CreatedProject }> {
    const key = keyOf(await createWorkspace());
    return { key, project: await createProject(key) };
  }

  afterAll(async () => {
    await Promise.all(receivers.map((started) => started.close()));
  });

  let key: Credentials;
  let project: CreatedProject;
  beforeAll(async () => {
    ({ key, project } = await isolated());
  });

  it('every kind carries both signatures; a receiver verifies the contract one and the standardwebhooks package accepts the other', async () => {
    for (const secret of [whsecOf(), plainOf()]) {
      const verdicts: Verdict[] = [];
      const hooks = await receiver({ reply: verifyingReply(secret, verdicts) });
      await registerWebhook(key, { url: `${hooks.origin}/std`, secret });
      const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
      await patchTask(key, task.id, { name: 'renamed' });
      await patchTask(key, task.id, { isCompleted: true });

      const requests = await hooks.waitFor(3);
      expect(verdicts).toEqual([...Array<Verdict>(3)].fill({ contract: true, standard: 'ok' }));
      expect(requests.map((request) => request.status)).toEqual([204, 204, 204]);
      expect(requests.map((request) => header(request, 'x-service-event'))).toEqual(['task.created', 'task.updated', 'task.completed']);
      for (const request of requests) {
        const payload = JSON.parse(request.body.toString('utf8')) as { id: string };
        expect(header(request, 'webhook-id')).toBe(payload.id);
        expect(header(request, 'webhook-id')).toBe(header(request, 'x-service-delivery'));
        expect(header(request, 'webhook-timestamp')).toMatch(/^\d{10}$/);
        expect(Math.abs(Number(header(request, 'webhook-timestamp')) - request.receivedAt / 1000)).toBeLessThan(5);
        expect(header(request, 'webhook-signature')).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
        // The contract headers are unchanged, and another secret verifies neither signature.
        expect(header(request, 'x-service-signature')).toMatch(/^sha256=[0-9a-f]{64}$/);
        expect(verifyBoth(`${secret}x`, request)).toEqual({ contract: false, standard: 'No matching signature found' });
      }
    }
  });

  it('keeps webhook-id across retries and a redelivery, with a fresh timestamp and signature per attempt', async () => {
    const own = await isolated();
    const secret = whsecOf();
    const verdicts: Verdict[] = [];
    const flaky = await receiver({ reply: verifyingReply(secret, verdicts, (n) => (n === 1 ? 503 : 204)) });
    const webhook = await registerWebhook(own.key, { url: `${flaky.origin}/`, secret });
    await createTask(own.key, { projectId: own.project.id, listId: own.project.defaultListId });
    await flaky.waitFor(2, 20_000);
    const [original] = await waitForDeliveryLog(own.key, webhook.id, (log) => log[0]?.status === 'succeeded');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const redelivered = await api<DeliveryLog>('POST', `/v1/webhooks/${webhook.id}/deliveries/${original?.id}/redeliver`, { credentials: own.key });
    expect(redelivered.status).toBe(202);

    const requests = await flaky.waitFor(3, 20_000);
    expect(verdicts.every((verdict) => verdict.contract && verdict.standard === 'ok')).toBe(true);
    expect(new Set(requests.map((request) => header(request, 'webhook-id')))).toEqual(new Set([original?.eventId]));
    expect(new Set(requests.map((request) => header(request, 'x-service-signature'))).size).toBe(1);
    const stamps = requests.map((request) => Number(header(request, 'webhook-timestamp')));
    expect(new Set(stamps).size).toBe(3);
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    expect(new Set(requests.map((request) => header(request, 'webhook-signature'))).size).toBe(3);
  });

  it('the receiver rejects a replayed delivery: once its timestamp is old, and when the timestamp is rewritten', async () => {
    const own = await isolated();
    const secret = plainOf();
    const verdicts: Verdict[] = [];
    const hooks = await receiver({ reply: verifyingReply(secret, verdicts) });
    await registerWebhook(own.key, { url: `${hooks.origin}/replay`, secret });
    await createTask(own.key, { projectId: own.project.id, listId: own.project.defaultListId });
    const [genuine] = await hooks.waitFor(1);
    expect(genuine?.status).toBe(204);

    // The same bytes again within the tolerance verify (receivers deduplicate on webhook-id).
    expect(await replay(hooks, genuine!)).toBe(204);
    // Six minutes later on the receiver's clock: too old.
    const sixMinutesOn = Date.now() + 6 * 60_000;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => sixMinutesOn);
    try {
      expect(await replay(hooks, genuine!)).toBe(401);
    } finally {
      clock.mockRestore();
    }
    // A fresh timestamp put on the old request: the signature covers it.
    const rewritten = String(Number(header(genuine, 'webhook-timestamp')) + 1);
    expect(await replay(hooks, genuine!, { 'webhook-timestamp': rewritten })).toBe(401);
    expect(verdicts.map((verdict) => verdict.standard)).toEqual(['ok', 'ok', 'Message timestamp too old', 'No matching signature found']);
    // The contract signature alone cannot tell a replay: it still verifies on every copy.
    expect(verdicts.map((verdict) => verdict.contract)).toEqual([true, true, true, true]);
  });
});
