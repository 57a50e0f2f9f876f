import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { call, fakeCredentials, ids, RpcFailure, signToken, startGateway, validApiKey, type Harness } from '../testing/harness.js';

const workspaceJson = { workspace: { id: ids.workspace, name: 'Acme', urlId: 'acme', taskPrefix: 'AC', plan: 'PLAN_FREE' } };
const otherKey = 'tws_other_0123456789abcdefghijklmnopqrstuvwxyz';
const otherKeyId = '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a';

/**
 * The auth caches with pushed revocations, through the real gateway app and a fake tasks service
 * (harness): a long TTL (60 s) so that only a revocation, never expiry, can explain a new lookup.
 */
describe('revocations plugin: pushed invalidation of the auth caches', () => {
  let h: Harness;
  const keyLookups = (): number => h.fake.callsOf('AuthenticateApiKey').length;
  const workspaceAs = (apiKey: string) => call(h.app, 'GET', '/v1/workspace', { apiKey });
  const metric = async (name: string): Promise<string> => {
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    return text.split('\n').filter((line) => line.startsWith(name)).join('\n');
  };

  beforeAll(async () => {
    h = await startGateway({ AUTH_FAILURES_PER_MINUTE: '10000', AUTH_API_KEY_CACHE_TTL_MS: '60000', AUTH_MEMBERSHIP_CACHE_TTL_MS: '60000' });
    fakeCredentials(h.fake);
    const credentials = h.fake.handlers.get('AuthenticateApiKey')!;
    h.fake.handlers.set('AuthenticateApiKey', (request) =>
      request.key === otherKey ? { workspaceId: ids.workspace, apiKeyId: otherKeyId, apiKeyName: 'other', userId: ids.user } : credentials(request),
    );
    h.fake.handlers.set('GetWorkspace', () => workspaceJson);
  });
  afterAll(async () => h.close());
  beforeEach(() => {
    h.fake.calls.length = 0;
  });

  test('the stream is ready once the app is (start-up waits for it)', async () => {
    expect(h.fake.revocations.watchers.size).toBe(1);
    expect(await metric('auth_revocation_stream_connected')).toMatch(/ 1$/);
  });

  test('a revoked key is looked up again on the next request; other keys stay cached', async () => {
    for (const key of [validApiKey, otherKey, validApiKey, otherKey]) expect((await workspaceAs(key)).status).toBe(200);
    expect(keyLookups()).toBe(2);
    h.fake.calls.length = 0;

    const revoked = h.fake.handlers.get('AuthenticateApiKey')!;
    h.fake.handlers.set('AuthenticateApiKey', (request) => {
      if (request.key === validApiKey) throw new RpcFailure(grpc.status.UNAUTHENTICATED, 'revoked');
      return revoked(request);
    });
    await h.fake.revocations.push({ id: 'rev-1', kind: 'REVOCATION_KIND_API_KEY', workspaceId: ids.workspace, apiKeyId: ids.apiKey });
    expect(h.fake.revocations.acks).toContain('rev-1');

    expect((await workspaceAs(validApiKey)).status).toBe(401);
    expect((await workspaceAs(otherKey)).status).toBe(200);
    expect(h.fake.callsOf('AuthenticateApiKey')).toEqual([{ key: validApiKey }]);
    expect(await metric('auth_revocations_received_total')).toMatch(/kind="apiKey"[^\n]* 1$/);
    h.fake.handlers.set('AuthenticateApiKey', revoked);
  });

  test('a membership that ended evicts the membership and every cached key of that member', async () => {
    const token = await signToken(h.key, { sub: ids.user, scope: 'read' });
    const asUser = () => call(h.app, 'GET', '/v1/workspace', { bearer: token, workspaceId: ids.workspace });
    for (let n = 0; n < 3; n++) {
      expect((await asUser()).status).toBe(200);
      expect((await workspaceAs(otherKey)).status).toBe(200);
    }
    expect(h.fake.callsOf('GetMembership')).toHaveLength(1);
    expect(keyLookups()).toBeLessThanOrEqual(1);
    h.fake.calls.length = 0;

    await h.fake.revocations.push({ id: 'rev-2', kind: 'REVOCATION_KIND_MEMBERSHIP', workspaceId: ids.workspace, userId: ids.user });
    await asUser();
    await workspaceAs(otherKey);
    expect(h.fake.callsOf('GetMembership')).toHaveLength(1);
    expect(keyLookups()).toBe(1);
  });

  test('while the stream is down every request looks up (nothing from memory), and caching resumes when it is back', async () => {
    expect((await workspaceAs(otherKey)).status).toBe(200);
    h.fake.calls.length = 0;
    h.fake.revocations.mode = 'refuse';
    h.fake.revocations.dropAll();
    await expect.poll(() => metric('auth_revocation_stream_connected')).toMatch(/ 0$/);
    for (let n = 0; n < 3; n++) expect((await workspaceAs(otherKey)).status).toBe(200);
    expect(keyLookups()).toBe(3);

    h.fake.revocations.mode = 'ready';
    await expect.poll(() => metric('auth_revocation_stream_connected'), { timeout: 10_000 }).toMatch(/ 1$/);
    h.fake.calls.length = 0;
    for (let n = 0; n < 3; n++) expect((await workspaceAs(otherKey)).status).toBe(200);
    expect(keyLookups()).toBe(1);
  });

  test('a revocation of a kind this version does not know clears the caches', async () => {
    expect((await workspaceAs(otherKey)).status).toBe(200);
    h.fake.calls.length = 0;
    await h.fake.revocations.push({ id: 'rev-3', kind: 'REVOCATION_KIND_UNSPECIFIED' });
    expect((await workspaceAs(otherKey)).status).toBe(200);
    expect(keyLookups()).toBe(1);
  });
});
