import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, fakeCredentials, ids, startGateway, type Harness } from '../testing/harness.js';

const workspaceJson = { workspace: { id: ids.workspace, name: 'Acme', urlId: 'acme', taskPrefix: 'AC', plan: 'PLAN_FREE' } };
const baseUrl = 'https://api.example.test';

/**
 * Grants revoked at the app's authorization server, through the real gateway app, a fake tasks
 * service (harness) and a JWKS endpoint standing in for the app: pushed revocations, the list loaded
 * at (re)subscription, the per-token check while the stream is not ready.
 */
describe('revoked OAuth grants', () => {
  let server: http.Server;
  let appUrl: string;
  let key: { privateKey: CryptoKey; jwk: JWK };
  const harnesses: Harness[] = [];

  const token = (grantId: string): Promise<string> =>
    new SignJWT({ scope: 'read write', grant_id: grantId, client_id: 'client-1', jti: `j-${Math.random()}` })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
      .setIssuer(appUrl)
      .setAudience(baseUrl)
      .setSubject(ids.user)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(key.privateKey);

  async function gateway(): Promise<Harness> {
    const h = await startGateway({ PUBLIC_BASE_URL: baseUrl, AUTH_APP_ISSUER_URL: appUrl, AUTH_FAILURES_PER_MINUTE: '10000' });
    fakeCredentials(h.fake);
    h.fake.handlers.set('GetWorkspace', () => workspaceJson);
    harnesses.push(h);
    return h;
  }
  const workspace = async (h: Harness, bearer: string) => call(h.app, 'GET', '/v1/workspace', { bearer, workspaceId: ids.workspace });
  const until = async (check: () => boolean): Promise<void> => {
    for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  };

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    key = { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' } };
    server = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.jwk] })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const h of harnesses) await h.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('a pushed grant revocation refuses its tokens on the next request (401), other grants go on', async () => {
    const h = await gateway();
    await until(() => h.fake.revocations.listCalls.length > 0);
    const [revoked, other] = [await token('grant-a'), await token('grant-b')];
    expect((await workspace(h, revoked)).status).toBe(200);
    expect((await workspace(h, other)).status).toBe(200);
    await h.fake.revocations.push({ id: 'rev-g1', kind: 'REVOCATION_KIND_GRANT', grantId: 'grant-a', expiresAtMs: Date.now() + 3_600_000 });
    expect(h.fake.revocations.acks).toContain('rev-g1');
    const refused = await workspace(h, revoked);
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual({ error: 'token has been revoked' });
    expect(refused.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    expect((await workspace(h, other)).status).toBe(200);
    // The synced set answers alone: no call per request.
    expect(h.fake.revocations.listCalls.filter((request) => request.grantId !== '')).toEqual([]);
  });

  test('a replica that subscribes later learns the live revoked grants (ListRevokedGrants at ready)', async () => {
    const h = await gateway();
    h.fake.revocations.revokedGrants.push({ grantId: 'grant-old', expiresAtMs: Date.now() + 600_000 });
    // Reconnect: the list is read again once the new stream is ready.
    h.fake.revocations.dropAll();
    await until(() => h.fake.revocations.listCalls.length >= 2 && h.fake.revocations.watchers.size === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await workspace(h, await token('grant-old'))).status).toBe(401);
    expect(h.fake.revocations.listCalls.at(-1)).toEqual({ grantId: '', limit: 100_000 });
  });

  test('while the stream is not ready, each token\'s grant is checked with the tasks service', async () => {
    const h = await gateway();
    h.fake.revocations.mode = 'refuse';
    h.fake.revocations.dropAll();
    h.fake.revocations.revokedGrants.push({ grantId: 'grant-c', expiresAtMs: Date.now() + 600_000 });
    expect((await workspace(h, await token('grant-c'))).status).toBe(401);
    expect((await workspace(h, await token('grant-d'))).status).toBe(200);
    expect(h.fake.revocations.listCalls.filter((request) => request.grantId !== '')).toEqual([
      { grantId: 'grant-c', limit: 1 },
      { grantId: 'grant-d', limit: 1 },
    ]);
  });
});
