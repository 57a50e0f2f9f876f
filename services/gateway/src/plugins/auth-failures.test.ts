/*
 * The auth plugin's limit on failed authentications per IP (AUTH_FAILURES_PER_MINUTE): guesses turn
 * into 429 with Retry-After while recently valid keys and tokens keep working and missing
 * credentials are not counted; under 200 concurrent guesses at most the limit of lookups reach the
 * tasks service, and a burst of one valid key or token shares one check.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAuthGateway } from '../testing/auth-gateway.js';
import { call, ed25519Key, ids, signToken, validApiKey, type Harness } from '../testing/harness.js';

describe('failed authentications per IP', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startAuthGateway({ AUTH_FAILURES_PER_MINUTE: '5' });
  });
  afterAll(async () => h.close());

  test('guessing keys turns into 429 with Retry-After; a recently valid key still works', async () => {
    expect((await call(h.app, 'GET', '/v1/workspace', { apiKey: validApiKey })).status).toBe(200);
    const knownToken = await signToken(h.key, { sub: ids.user, scope: 'read' });
    expect((await call(h.app, 'GET', '/v1/workspace', { bearer: knownToken, workspaceId: ids.workspace })).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) statuses.push((await call(h.app, 'GET', '/v1/workspace', { apiKey: `tws_guess_${i}` })).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    const blocked = await call(h.app, 'GET', '/v1/workspace', { apiKey: 'tws_guess_again' });
    expect(blocked.json).toEqual({ error: 'too many failed authentication attempts, retry later' });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Known-valid (cached) keys are not held up by someone else's failures from the same address.
    expect((await call(h.app, 'GET', '/v1/workspace', { apiKey: validApiKey })).status).toBe(200);
    expect((await call(h.app, 'GET', '/v1/workspace', { bearer: knownToken, workspaceId: ids.workspace })).status).toBe(200);
    const newToken = await signToken(h.key, { sub: ids.user, scope: 'read write' });
    expect((await call(h.app, 'GET', '/v1/workspace', { bearer: newToken, workspaceId: ids.workspace })).status).toBe(429);
    // Missing credentials are not guesses and are not counted (but still 401).
    expect((await call(h.app, 'GET', '/v1/workspace')).status).toBe(401);
  });
});

describe('failed authentications per IP, under concurrency', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startAuthGateway({ AUTH_FAILURES_PER_MINUTE: '5' });
  });
  afterAll(async () => h.close());

  const from = (remoteAddress: string, headers: Record<string, string>) =>
    h.app.inject({ method: 'GET', url: '/v1/workspace', headers, remoteAddress });
  const statusCounts = (responses: Array<{ statusCode: number }>) =>
    responses.reduce<Record<number, number>>((counts, r) => ({ ...counts, [r.statusCode]: (counts[r.statusCode] ?? 0) + 1 }), {});

  test('200 concurrent guesses: at most the limit of lookups reach the tasks service, the rest 429', async () => {
    const before = h.fake.callsOf('AuthenticateApiKey').length;
    const responses = await Promise.all(Array.from({ length: 200 }, (_, n) => from('10.9.0.1', { 'x-api-key': `tws_guess_${n}` })));
    expect(h.fake.callsOf('AuthenticateApiKey').length - before).toBeLessThanOrEqual(5);
    expect(statusCounts(responses)).toEqual({ 401: 5, 429: 195 });
    const tokens = await Promise.all(Array.from({ length: 50 }, (_, n) => signToken(ed25519Key(), { sub: `user-${n}`, scope: 'read' })));
    const bearer = await Promise.all(tokens.map((token) => from('10.9.0.2', { authorization: `Bearer ${token}`, 'x-workspace-id': ids.workspace })));
    expect(statusCounts(bearer)).toEqual({ 401: 5, 429: 45 });
  });

  test('a burst of one valid key or token not seen before shares one check: nothing is refused', async () => {
    const before = h.fake.callsOf('AuthenticateApiKey').length;
    const keyed = await Promise.all(Array.from({ length: 50 }, () => from('10.9.0.3', { 'x-api-key': validApiKey })));
    expect(statusCounts(keyed)).toEqual({ 200: 50 });
    expect(h.fake.callsOf('AuthenticateApiKey').length - before).toBeLessThanOrEqual(1);
    const token = await signToken(h.key, { sub: ids.user, scope: 'read' });
    const bearer = await Promise.all(Array.from({ length: 50 }, () => from('10.9.0.3', { authorization: `Bearer ${token}`, 'x-workspace-id': ids.workspace })));
    expect(statusCounts(bearer)).toEqual({ 200: 50 });
  });
});
