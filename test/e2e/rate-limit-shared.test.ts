import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { createApiKey } from '../support/fixtures.js';
import { startExtraGateway, type ExtraGateway } from '../support/second-gateway.js';

/**
 * The request limit shared by gateway replicas (#18 item 4): two gateway replicas against the test
 * stack's tasks service (and its Postgres), each deciding locally and syncing its usage every 200 ms
 * (tasks.v1.RateLimitService). A client that alternates between them is held to about one limit —
 * not one per replica — and the RateLimit headers count down across both.
 */
const burst = 20;
const perSecond = 0.2;
const syncMs = 200;
const limits = { RATE_LIMIT_PER_SECOND: String(perSecond), RATE_LIMIT_BURST: String(burst), RATE_LIMIT_SYNC_INTERVAL_MS: String(syncMs) };

interface Answer {
  status: number;
  remaining: number | undefined;
  headers: Headers;
}

async function get(gateway: ExtraGateway, path: string, apiKey?: string): Promise<Answer> {
  const response = await fetch(`${gateway.url}${path}`, { headers: apiKey ? { 'x-api-key': apiKey } : {} });
  await response.arrayBuffer();
  const remaining = /^"default";r=(\d+);t=(\d+)$/.exec(response.headers.get('ratelimit') ?? '')?.[1];
  return { status: response.status, remaining: remaining === undefined ? undefined : Number(remaining), headers: response.headers };
}

describe('rate limit shared by two gateway replicas', () => {
  let ws: TestWorkspace;
  let a: ExtraGateway;
  let b: ExtraGateway;

  beforeAll(async () => {
    [ws, a, b] = await Promise.all([
      createWorkspace(),
      startExtraGateway(`ratelimit-a-${process.pid}`, { env: limits }),
      startExtraGateway(`ratelimit-b-${process.pid}`, { env: limits }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('a client alternating between the replicas gets about one burst, not two', async () => {
    const key = (await createApiKey(ws.workspace.id, ws.owner.userId)).key;
    const started = Date.now();
    const answers: Answer[] = [];
    for (let i = 0; i < 90; i += 1) {
      answers.push(await get(i % 2 === 0 ? a : b, '/v1/statuses', key));
      await sleep(25);
    }
    const elapsedSeconds = (Date.now() - started) / 1000;
    const passed = answers.filter((answer) => answer.status === 200).length;
    const perReplica = [a, b].map((_, index) => answers.filter((answer, i) => i % 2 === index && answer.status === 200).length);
    // One shared bucket: the burst plus the refill while it ran, plus the overshoot bound (what the
    // other replica lets through within a sync interval or two: 40 req/s × 0.2 s ≈ 8, halved).
    const oneLimit = burst + Math.ceil(perSecond * elapsedSeconds);
    console.log(`alternating client: ${JSON.stringify({ passed, perReplica, oneLimit, elapsedSeconds })}`);
    expect(passed).toBeGreaterThanOrEqual(burst);
    expect(passed).toBeLessThanOrEqual(oneLimit + 8);
    // Each replica alone would have let through a burst of its own: twice the limit.
    expect(passed).toBeLessThan(2 * burst);
    for (const answer of answers.filter((item) => item.status === 429)) {
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(answer.remaining).toBe(0);
    }
    expect(answers.every((answer) => answer.headers.get('ratelimit-policy') === `"default";q=${burst};w=${Math.ceil(burst / perSecond)}`)).toBe(true);
  });

  it('the RateLimit header counts down across both replicas', async () => {
    const key = (await createApiKey(ws.workspace.id, ws.owner.userId)).key;
    // Both replicas learn the key (a replica decides a key it has never seen with a full bucket).
    await get(a, '/v1/statuses', key);
    await get(b, '/v1/statuses', key);
    await sleep(3 * syncMs);
    const seen: number[] = [];
    const started = Date.now();
    for (let i = 0; i < 8; i += 1) {
      const answer = await get(i % 2 === 0 ? a : b, '/v1/statuses', key);
      expect(answer.status).toBe(200);
      seen.push(answer.remaining!);
      await sleep(3 * syncMs); // both replicas synced the request before the next one
    }
    console.log(`remaining, alternating replicas: ${JSON.stringify(seen)}`);
    // One request less each step, give or take the refill (0.2 tokens/s); each replica on its own
    // would count only its own 4 requests.
    const refill = Math.ceil(perSecond * ((Date.now() - started) / 1000));
    for (let i = 1; i < seen.length; i += 1) expect(seen[i]).toBeLessThanOrEqual(seen[i - 1]!);
    expect(seen[0]).toBeLessThanOrEqual(burst - 3);
    expect(seen.at(-1)).toBeLessThanOrEqual(seen[0]! - (seen.length - 1) + refill);
    expect(refill).toBeLessThanOrEqual(2);
  });

  it('probes and metrics stay unlimited and carry no RateLimit headers; unauthenticated answers do', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const answer = await get(a, path);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit')).toBeNull();
      expect(answer.headers.get('ratelimit-policy')).toBeNull();
    }
    const anonymous = await get(b, '/v1/statuses');
    expect(anonymous.status).toBe(401);
    expect(anonymous.remaining).toBeLessThan(burst);
  });

  it('the tasks service counts both replicas as live', async () => {
    const text = await (await fetch(`${a.url}/metrics`)).text();
    expect(text).toMatch(/^rate_limit_shared(\{[^}]*\})? 1$/m);
    const replicas = Number(/^rate_limit_replicas(?:\{[^}]*\})? (\d+)$/m.exec(text)?.[1]);
    expect(replicas).toBeGreaterThanOrEqual(2);
  });
});
