/*
 * How the auth plugin verifies Bearer tokens in its other configurations: with no token key set
 * every token is refused; an RSA or EC public key accepts only the algorithms allowed for it; with
 * a JWKS URL tokens are verified against the fetched key set, and a key set that cannot be fetched
 * is 503, not 401.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAuthGateway } from '../testing/auth-gateway.js';
import { call, ed25519Key, fakeCredentials, ids, jwtAudience, jwtIssuer, signToken, startGateway, type Harness } from '../testing/harness.js';

describe('Bearer tokens not configured', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startGateway({ AUTH_JWT_PUBLIC_KEY: '', AUTH_JWT_ISSUER: '', AUTH_JWT_AUDIENCE: '' });
    fakeCredentials(h.fake);
  });
  afterAll(async () => h.close());

  test('every Bearer token → 401', async () => {
    const token = await signToken(h.key, { sub: ids.user, scope: 'read' });
    const response = await call(h.app, 'GET', '/v1/workspace', { bearer: token, workspaceId: ids.workspace });
    expect(response.status).toBe(401);
    expect(response.json).toEqual({ error: 'Bearer tokens are not accepted by this server' });
  });
});

describe('RSA and EC public keys', () => {
  test.each([
    ['RS256', generateKeyPairSync('rsa', { modulusLength: 2048 })],
    ['ES256', generateKeyPairSync('ec', { namedCurve: 'P-256' })],
  ] as const)('%s', async (alg, pair) => {
    const h = await startAuthGateway({ AUTH_JWT_PUBLIC_KEY: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString() });
    try {
      const token = await signToken({ privateKey: pair.privateKey, publicKeyPem: '' }, { sub: ids.user, scope: 'read', alg });
      expect((await call(h.app, 'GET', '/v1/workspace', { bearer: token, workspaceId: ids.workspace })).status).toBe(200);
      // The same key under an algorithm that is not allowed for it.
      const other = await signToken({ privateKey: pair.privateKey, publicKeyPem: '' }, { sub: ids.user, scope: 'read', alg: alg === 'RS256' ? 'PS256' : 'ES256' });
      const expected = alg === 'RS256' ? 401 : 200;
      expect((await call(h.app, 'GET', '/v1/workspace', { bearer: other, workspaceId: ids.workspace })).status).toBe(expected);
    } finally {
      await h.close();
    }
  });
});

describe('JWKS', () => {
  const signing = ed25519Key();
  let jwks: Server;
  let url: string;
  let up = true;
  beforeAll(async () => {
    const jwk = { ...(await exportJWK(signing.privateKey)), kid: 'k1', alg: 'EdDSA', use: 'sig' };
    delete jwk.d;
    jwks = createServer((_request, response) => {
      if (!up) {
        response.writeHead(500).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
  });
  afterAll(async () => new Promise<void>((resolve) => jwks.close(() => resolve())));

  test('tokens are verified against the key set; an unreachable key set is 503', async () => {
    const h = await startAuthGateway({ AUTH_JWT_PUBLIC_KEY: '', AUTH_JWT_JWKS_URL: url });
    try {
      const sign = (sub: string) =>
        new SignJWT({ scope: 'read' })
          .setProtectedHeader({ alg: 'EdDSA', kid: 'k1' })
          .setIssuer(jwtIssuer)
          .setAudience(jwtAudience)
          .setSubject(sub)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(signing.privateKey);
      expect((await call(h.app, 'GET', '/v1/workspace', { bearer: await sign(ids.user), workspaceId: ids.workspace })).status).toBe(200);
      const stranger = await signToken(ed25519Key(), { sub: ids.user, scope: 'read' });
      expect((await call(h.app, 'GET', '/v1/workspace', { bearer: stranger, workspaceId: ids.workspace })).status).toBe(401);
    } finally {
      await h.close();
    }
    // A key set that cannot be fetched is not the client's fault: 503, not 401.
    up = false;
    const down = await startGateway({ AUTH_JWT_PUBLIC_KEY: '', AUTH_JWT_JWKS_URL: url });
    try {
      fakeCredentials(down.fake);
      const token = await signToken(signing, { sub: ids.user, scope: 'read' });
      const response = await call(down.app, 'GET', '/v1/workspace', { bearer: token, workspaceId: ids.workspace });
      expect(response.status).toBe(503);
      expect(response.json).toEqual({ error: 'service temporarily unavailable' });
    } finally {
      up = true;
      await down.close();
    }
  });
});
