import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api, type ApiResponse, type Credentials } from '../support/api.js';
import { countStatuses, createApiKey, expectError, expectStatus, keyOf, pollUntil } from '../support/fixtures.js';
import { requestFrom } from '../support/http-from.js';

/**
 * Rate limits (design: per-credential token bucket, default 50 req/s with a burst of 200; failed
 * authentication 30 per minute per IP; 429 + Retry-After + {"error"}). The brute-force test comes from
 * its own loopback address, so the block it causes touches no other test, whatever the file order.
 */
function expectTooManyRequests(response: ApiResponse): void {
  expectError(response, 429);
  expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
}

/** AuthenticateApiKey calls the tasks service has handled (any outcome), read from its /metrics. */
async function apiKeyLookups(): Promise<number> {
  let total = 0;
  for (const tasks of inject('stack').services.filter((service) => service.name === 'tasks')) {
    const text = await (await fetch(`${tasks.opsUrl}/metrics`)).text();
    for (const line of text.split('\n')) {
      if (line.startsWith('grpc_server_handled_total{') && line.includes('grpc_method="AuthenticateApiKey"')) total += Number(line.split(' ').pop());
    }
  }
  return total;
}

describe('rate limits', () => {
  let ws: TestWorkspace;

  beforeAll(async () => {
    ws = await createWorkspace();
  });

  it('one credential gets its burst, then 429 with Retry-After; other credentials are unaffected', async () => {
    const limited: Credentials = { apiKey: (await createApiKey(ws.workspace.id, ws.owner.userId)).key };
    const started = Date.now();
    const responses = await Promise.all(
      Array.from({ length: 400 }, () => api('GET', '/v1/statuses', { credentials: limited, rateLimited: 'return' })),
    );
    const elapsedSeconds = (Date.now() - started) / 1000;

    const counts = countStatuses(responses);
    expect(Object.keys(counts).sort()).toStrictEqual(['200', '429']);
    expect(counts[200]).toBeGreaterThanOrEqual(200);
    expect(counts[200]).toBeLessThanOrEqual(200 + Math.ceil(50 * elapsedSeconds) + 1);
    for (const response of responses.filter((r) => r.status === 429)) expectTooManyRequests(response);

    expectStatus(await api('GET', '/v1/statuses', { credentials: keyOf(ws) }), 200);

    // The bucket refills: the limited key works again within the time Retry-After announced.
    const retryAfter = Number(responses.find((r) => r.status === 429)!.headers.get('retry-after'));
    const recovered = await pollUntil(
      () => api('GET', '/v1/statuses', { credentials: limited, rateLimited: 'return' }),
      (response) => response.status === 200,
      { timeoutMs: (retryAfter + 1) * 1000, intervalMs: 100 },
    );
    expectStatus(recovered, 200);
  });

  it('Retry-After is enough: the refused requests, sent again after it, all get through', async () => {
    const key: Credentials = { apiKey: (await createApiKey(ws.workspace.id, ws.owner.userId)).key };
    // 250 at once: the burst of 200 passes, the rest are refused (the test helper waits 429s out by default).
    const first = await Promise.all(Array.from({ length: 250 }, () => api('GET', '/v1/statuses', { credentials: key, rateLimited: 'return' })));
    const refused = first.filter((response) => response.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    const retryAfter = Math.max(...refused.map((response) => Number(response.headers.get('retry-after'))));
    await sleep(retryAfter * 1000);
    const again = await Promise.all(refused.map(() => api('GET', '/v1/statuses', { credentials: key, rateLimited: 'return' })));
    expect(countStatuses(again)).toStrictEqual({ 200: refused.length });
  });

  it('failed authentication from one IP is blocked with 429 after 30 attempts a minute; other IPs are not', async () => {
    const attacker = '127.0.0.2';
    const statuses: number[] = [];
    let blocked: ApiResponse | undefined;
    for (let attempt = 0; attempt < 40; attempt++) {
      const response = await requestFrom(attacker, 'GET', '/v1/workspace', { headers: { 'x-api-key': `guess-${attempt}` } });
      statuses.push(response.status);
      if (response.status === 429) blocked ??= response;
      else expectError(response, 401);
    }
    expect(statuses.slice(0, 30)).toStrictEqual(Array.from({ length: 30 }, () => 401));
    expect(statuses.slice(32)).toStrictEqual(Array.from({ length: 8 }, () => 429));
    expectTooManyRequests(blocked!);

    // Another address still gets the ordinary answers.
    expectError(await requestFrom('127.0.0.3', 'GET', '/v1/workspace', { headers: { 'x-api-key': 'guess' } }), 401);
    expectStatus(await requestFrom('127.0.0.3', 'GET', '/v1/workspace', { headers: { 'x-api-key': ws.apiKey.key } }), 200);
  });
  it('1,000 concurrent bad keys from one IP: at most the configured 30 lookups reach the tasks service, the rest 429', async () => {
    const attacker = '127.0.0.4';
    const before = await apiKeyLookups();
    const started = Date.now();
    const responses = await Promise.all(
      Array.from({ length: 1000 }, () =>
        requestFrom(attacker, 'GET', '/v1/workspace', { headers: { 'x-api-key': `tws_${randomBytes(30).toString('base64url').slice(0, 40)}` } }),
      ),
    );
    const elapsedSeconds = (Date.now() - started) / 1000;
    const lookups = (await apiKeyLookups()) - before;
    // The bucket: 30 at once, refilled at 30 per minute while the burst ran.
    const allowed = 30 + Math.ceil(elapsedSeconds / 2);
    const counts = countStatuses(responses);
    console.log(`1,000 concurrent bad keys: ${JSON.stringify({ counts, lookups, allowed, elapsedSeconds })}`);

    expect(lookups).toBeGreaterThan(0);
    expect(lookups).toBeLessThanOrEqual(allowed);
    expect(Object.keys(counts).sort()).toStrictEqual(['401', '429']);
    expect(counts[401]).toBeLessThanOrEqual(lookups);
    for (const response of responses) {
      if (response.status === 429) expectTooManyRequests(response);
      else expectError(response, 401);
    }

    // The block is per IP: another address still authenticates with a good key.
    expectStatus(await requestFrom('127.0.0.5', 'GET', '/v1/workspace', { headers: { 'x-api-key': ws.apiKey.key } }), 200);
  });
});
