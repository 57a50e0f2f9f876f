import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import type { Credentials } from '../support/api.js';
import { createProject, createTask, keyOf, type CreatedProject } from '../support/fixtures.js';
import { registerWebhook, waitForDeliveryLog } from '../support/webhooks/fixtures.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';

/**
 * A receiver that holds every request for 60 s: the attempt is cut at the 10 s attempt timeout
 * (WEBHOOK_TIMEOUT_MS, the contract's "timeout after 10 s"), recorded as `failed` with a timeout
 * error and a duration of ~10 s, and retried with the same event id; meanwhile another endpoint of
 * the same workspace gets the same event at once. (webhooks-delivery.test.ts shows that a request
 * that never ends does not delay other endpoints; this suite pins the time-out and its record.)
 */
const TIMEOUT_MS = 10_000;
const secretOf = (): string => `whsec_${randomBytes(18).toString('base64url')}`;

describe('webhook receiver that hangs for 60 s', () => {
  let workspace: TestWorkspace;
  let key: Credentials;
  let project: CreatedProject;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    workspace = await createWorkspace({ plan: 'pro' });
    key = keyOf(workspace);
    project = await createProject(key);
  });
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  it('the attempt times out at ~10 s, is logged as failed with a timeout error, and another endpoint is not delayed', async () => {
    // 60 s on the first request only; answers at once afterwards, so the retry succeeds.
    const slow = await startReceiver({ reply: (n) => (n === 1 ? { status: 200, delayMs: 60_000 } : 200) });
    const fast = await startReceiver();
    receivers.push(slow, fast);
    const slowHook = await registerWebhook(key, { url: `${slow.origin}/`, secret: secretOf(), events: ['task.created'] });
    await registerWebhook(key, { url: `${fast.origin}/`, secret: secretOf(), events: ['task.created'] });

    const createdAt = Date.now();
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'Slow receiver' });
    const [fastRequest] = await fast.waitFor(1, 10_000);
    const fastLatency = fastRequest!.receivedAt - createdAt;
    const [firstSlow] = await slow.waitFor(1, 10_000);

    // Attempt 1 fails by time-out; attempt 2 (after the test stack's 2 s retry delay) succeeds.
    const deliveries = await waitForDeliveryLog(
      key,
      slowHook.id,
      (log) => log.some((delivery) => delivery.attempts.length >= 2 && delivery.status === 'succeeded'),
      40_000,
    );
    const delivery = deliveries.find((candidate) => JSON.parse(firstSlow!.body.toString('utf8')).id === candidate.eventId)!;
    expect(delivery).toBeDefined();
    const [first, second] = delivery.attempts;
    console.log(
      `hanging receiver: attempt 1 ${first!.outcome} after ${(first!.durationMs / 1000).toFixed(2)} s (${first!.error}); ` +
        `attempt 2 ${second!.outcome} ${second!.statusCode}; other endpoint got the event ${fastLatency} ms after the POST`,
    );
    expect(first).toMatchObject({ attempt: 1, outcome: 'failed', statusCode: null, error: expect.stringMatching(/timeout/i) });
    expect(first!.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(first!.durationMs).toBeLessThan(TIMEOUT_MS + 1_500);
    expect(second).toMatchObject({ attempt: 2, outcome: 'succeeded', statusCode: 200, error: null });
    // The retry is the same event (same id and delivery header) and came after the time-out, not after 60 s.
    const [, retry] = slow.requests;
    expect(retry!.headers['x-service-delivery']).toBe(firstSlow!.headers['x-service-delivery']);
    expect(retry!.body.equals(firstSlow!.body)).toBe(true);
    expect(retry!.receivedAt - firstSlow!.receivedAt).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(retry!.receivedAt - firstSlow!.receivedAt).toBeLessThan(TIMEOUT_MS + 8_000);
    // The other endpoint did not wait for the slow one.
    expect(fastLatency).toBeLessThan(5_000);
    expect(JSON.parse(fastRequest!.body.toString('utf8')).data.id).toBe(task.id);
  }, 60_000);
});
