import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, fakeCredentials, ids, signToken, startGateway, validApiKey, type Harness } from '../testing/harness.js';
import { KeyedTokenBuckets } from './rate-limit.js';

describe('KeyedTokenBuckets', () => {
  test('a new key starts with its burst, then refills at the rate', () => {
    vi.useFakeTimers({ toFake: ['performance', 'Date'] });
    try {
      const buckets = new KeyedTokenBuckets(20, 3);
      expect([buckets.take('a'), buckets.take('a'), buckets.take('a')]).toEqual([0, 0, 0]);
      expect(buckets.take('a')).toBe(1); // whole seconds, at least 1
      expect(buckets.take('b')).toBe(0); // keys are independent
      vi.advanceTimersByTime(100); // 20/s → 2 tokens back
      expect([buckets.take('a'), buckets.take('a')]).toEqual([0, 0]);
      expect(buckets.take('a')).toBeGreaterThan(0);
    } finally {
      vi.useRealTimers();
    }
  });

  test('Retry-After reflects the refill rate', () => {
    const buckets = new KeyedTokenBuckets(0.1, 1); // one token per 10 s
    expect(buckets.take('k')).toBe(0);
    const wait = buckets.take('k');
    expect(wait).toBeGreaterThanOrEqual(9);
    expect(wait).toBeLessThanOrEqual(10);
  });

  test('waitSeconds does not take', () => {
    const buckets = new KeyedTokenBuckets(1, 1);
    expect(buckets.waitSeconds('k')).toBe(0);
    expect(buckets.take('k')).toBe(0);
    expect(buckets.waitSeconds('k')).toBe(1);
  });

  test('refund gives a token back, never beyond the burst', () => {
    const buckets = new KeyedTokenBuckets(0.01, 2);
    expect([buckets.take('k'), buckets.take('k')]).toEqual([0, 0]);
    expect(buckets.take('k')).toBeGreaterThan(0);
    buckets.refund('k');
    expect(buckets.take('k')).toBe(0);
    for (let i = 0; i < 5; i += 1) buckets.refund('k');
    expect([buckets.take('k'), buckets.take('k')]).toEqual([0, 0]);
    expect(buckets.take('k')).toBeGreaterThan(0);
  });

  test('rate 0 disables the limit', () => {
    const buckets = new KeyedTokenBuckets(0, 1);
    expect(buckets.enabled).toBe(false);
    for (let i = 0; i < 100; i += 1) expect(buckets.take('k')).toBe(0);
  });
});

describe('per-credential limit in the gateway', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startGateway({ RATE_LIMIT_PER_SECOND: '0.5', RATE_LIMIT_BURST: '3' });
    fakeCredentials(h.fake);
    h.fake.handlers.set('ListProjects', () => ({ projects: [] }));
  });
  afterAll(async () => h.close());

  test('the burst passes, then 429 + Retry-After + {"error"}; other credentials are unaffected', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await call(h.app, 'GET', '/v1/projects', { apiKey: validApiKey })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await call(h.app, 'GET', '/v1/projects', { apiKey: validApiKey });
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: 'rate limit exceeded, retry later' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    const token = await signToken(h.key, { sub: ids.user, scope: 'read' });
    expect((await call(h.app, 'GET', '/v1/projects', { bearer: token, workspaceId: ids.workspace })).status).toBe(200);
  });

  test('probes are never limited; other routes are limited by client IP', async () => {
    for (let i = 0; i < 10; i += 1) expect((await h.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await h.app.inject({ url: '/openapi.json', remoteAddress: '10.1.2.3' })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await h.app.inject({ url: '/openapi.json', remoteAddress: '10.1.2.4' })).statusCode).toBe(200);
  });
});

describe('each request is charged once, by its route policy', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startGateway({ RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '2' });
    fakeCredentials(h.fake);
    h.fake.handlers.set('GetWorkspace', () => ({ workspace: { id: ids.workspace, name: 'Acme', urlId: 'acme', taskPrefix: 'AC', plan: 'PLAN_FREE' } }));
  });
  afterAll(async () => h.close());

  const statuses = async (times: number, request: () => Promise<{ statusCode: number }>) => {
    const seen = [];
    for (let i = 0; i < times; i += 1) seen.push((await request()).statusCode);
    return seen;
  };

  test('HEAD (derived from GET by fastify) takes one token, per credential or per client IP', async () => {
    const head = () => h.app.inject({ method: 'HEAD', url: '/v1/workspace', headers: { 'x-api-key': validApiKey } });
    expect(await statuses(3, head)).toEqual([200, 200, 429]);
    expect(await statuses(3, () => h.app.inject({ method: 'HEAD', url: '/openapi.json', remoteAddress: '10.9.0.1' }))).toEqual([200, 200, 429]);
  });

  test('requests that match no route are charged to the client IP', async () => {
    expect(await statuses(3, () => h.app.inject({ url: '/v1/nothing', remoteAddress: '10.9.0.2' }))).toEqual([404, 404, 429]);
  });
});

describe('RateLimit headers (IETF draft fields)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startGateway({ RATE_LIMIT_PER_SECOND: '0.5', RATE_LIMIT_BURST: '3' });
    fakeCredentials(h.fake);
    h.fake.handlers.set('ListProjects', () => ({ projects: [] }));
  });
  afterAll(async () => h.close());

  test('every charged answer carries RateLimit-Policy and RateLimit, the 429 too; probes carry neither', async () => {
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(await call(h.app, 'GET', '/v1/projects', { apiKey: validApiKey }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((answer) => answer.headers['ratelimit'])).toEqual(['"default";r=2;t=2', '"default";r=1;t=4', '"default";r=0;t=6', '"default";r=0;t=6']);
    for (const answer of answers) expect(answer.headers['ratelimit-policy']).toBe('"default";q=3;w=6');
    expect(answers[3]!.headers['retry-after']).toBe('2');
    const probe = await h.app.inject({ url: '/healthz' });
    expect(probe.headers['ratelimit']).toBeUndefined();
    expect(probe.headers['ratelimit-policy']).toBeUndefined();
    const metrics = await h.app.inject({ url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.headers['ratelimit']).toBeUndefined();
  });
});
