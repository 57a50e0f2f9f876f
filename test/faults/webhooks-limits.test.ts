import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhooksFeed } from '../support/webhooks/feed.js';
import { taskEventMessage } from '../support/webhooks/fixtures.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/webhooks/receiver.js';
import { taskEventsTopic } from '@tws/contracts';

/**
 * The attempt limits of a webhooks replica, seen from the endpoints: at most
 * WEBHOOK_ENDPOINT_CONCURRENCY (32) requests open at one endpoint, WEBHOOK_WORKSPACE_CONCURRENCY
 * (128) across one workspace's endpoints and WEBHOOK_DELIVERY_CONCURRENCY (256) in all, and each
 * limit used in full when the work is there (a limit that admitted fewer would pass a "no more
 * than" check alone). Every endpoint answers after
 * `ANSWER_MS`, so the first wave of requests is open at once; a request is counted open from its
 * arrival to its answer, a span inside the one the replica holds its place for. The shared stack
 * runs one webhooks replica. Each event is of its own task (first attempts of one task queue in order).
 */
const ANSWER_MS = 1_500;
const secret = `whsec_${randomBytes(12).toString('hex')}`;

/** Most requests open at once, each open from its arrival for `ANSWER_MS`. */
function mostOpenAtOnce(requests: readonly ReceivedRequest[]): number {
  const edges = requests.flatMap((request) => [
    { at: request.receivedAt, step: 1 },
    { at: request.receivedAt + ANSWER_MS, step: -1 },
  ]);
  // At equal times the answer goes first: a place handed on is not two places.
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let open = 0;
  let most = 0;
  for (const { step } of edges) {
    open += step;
    most = Math.max(most, open);
  }
  return most;
}

describe('webhook attempt limits', () => {
  let feed: WebhooksFeed;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    feed = await WebhooksFeed.open();
  });
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await feed?.close();
  });

  const slowEndpoints = async (workspaceId: string, count: number): Promise<TestReceiver[]> => {
    const started = await Promise.all(Array.from({ length: count }, () => startReceiver({ reply: () => ({ status: 200, delayMs: ANSWER_MS }) })));
    receivers.push(...started);
    for (const receiver of started) await feed.register(workspaceId, receiver, secret);
    return started;
  };

  /** Every request of `endpoints` once each has `count`. */
  const requestsOf = async (endpoints: TestReceiver[], count: number): Promise<ReceivedRequest[]> =>
    (await Promise.all(endpoints.map((endpoint) => endpoint.waitFor(count, 60_000)))).flat();

  const publish = async (workspaceId: string, events: number): Promise<void> => {
    const messages = Array.from({ length: events }, (_, n) => taskEventMessage({ workspaceId, kind: 'task.updated', name: `limit ${n}` }).message);
    await feed.producer.send({ topic: taskEventsTopic, acks: -1, messages });
  };

  it('holds at most 32 requests open at one endpoint, and uses all 32', async () => {
    const workspaceId = randomUUID();
    const [endpoint] = await slowEndpoints(workspaceId, 1);
    await publish(workspaceId, 60);
    const requests = await endpoint!.waitFor(60, 60_000);
    expect(new Set(requests.map((request) => request.headers['x-service-delivery'])).size).toBe(60);
    expect(mostOpenAtOnce(requests)).toBe(32);
  });

  it("holds at most 128 requests open across one workspace's endpoints, and uses all 128", async () => {
    const workspaceId = randomUUID();
    // 6 endpoints × 32 places would be 192 at once: the workspace's share binds first.
    const endpoints = await slowEndpoints(workspaceId, 6);
    await publish(workspaceId, 30);
    const all = await requestsOf(endpoints, 30);
    expect(all).toHaveLength(180);
    for (const endpoint of endpoints) expect(mostOpenAtOnce(endpoint.requests)).toBeLessThanOrEqual(32);
    expect(mostOpenAtOnce(all)).toBe(128);
  });

  it('holds at most 256 requests open across workspaces (the replica), and uses all 256', async () => {
    // 3 workspaces × 128 would be 384 at once: the replica's limit binds first.
    const workspaces = [randomUUID(), randomUUID(), randomUUID()];
    const endpointsOf = await Promise.all(workspaces.map((workspaceId) => slowEndpoints(workspaceId, 6)));
    await Promise.all(workspaces.map((workspaceId) => publish(workspaceId, 30)));
    const perWorkspace = await Promise.all(endpointsOf.map((endpoints) => requestsOf(endpoints, 30)));
    for (const requests of perWorkspace) {
      expect(requests).toHaveLength(180);
      expect(mostOpenAtOnce(requests)).toBeLessThanOrEqual(128);
    }
    expect(mostOpenAtOnce(perWorkspace.flat())).toBe(256);
  });
});
