import * as grpc from '@grpc/grpc-js';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import {
  call,
  ed25519Key,
  fakeCredentials,
  ids,
  jwtAudience,
  jwtIssuer,
  RpcFailure,
  signToken,
  startGateway,
  validApiKey,
  type Harness,
} from '../testing/harness.js';

const workspaceJson = { workspace: { id: ids.workspace, name: 'Acme', urlId: 'acme', taskPrefix: 'AC', plan: 'PLAN_FREE' } };

describe('auth plugin', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startGateway({ AUTH_FAILURES_PER_MINUTE: '10000', AUTH_API_KEY_CACHE_TTL_MS: '1000' });
    fakeCredentials(h.fake);
    h.fake.handlers.set('GetWorkspace', () => workspaceJson);
    h.fake.handlers.set('CreateProject', () => ({ id: ids.project, defaultListId: ids.section }));
  });
  afterAll(async () => h.close());
  beforeEach(() => {
    h.fake.calls.length = 0;
  });

  describe('API key', () => {
    test('a valid key reaches the route with the key workspace', async () => {
      const response = await call(h.app, 'GET', '/v1/workspace', { apiKey: validApiKey });
      expect(response.status).toBe(200);
      expect(h.fake.callsOf('GetWorkspace')).toEqual([{ workspaceId: ids.workspace }]);
    });

    test('missing credentials → 401 {error} with WWW-Authenticate', async () => {
      const response = await call(h.app, 'GET', '/v1/workspace');
      expect(response.status).toBe(401);
      expect(response.json).toEqual({ error: expect.stringContaining('missing credentials') });
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm=/);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
    });

    test('an unknown key → 401, also on writes before any body check', async () => {
      expect((await call(h.app, 'GET', '/v1/workspace', { apiKey: 'tws_nope' })).status).toBe(401);
      const write = await call(h.app, 'POST', '/v1/projects', { apiKey: 'tws_nope', rawBody: 'not json', headers: { 'content-type': 'text/plain' } });
      expect(write.status).toBe(401);
      expect(write.json).toEqual({ error: 'invalid API key' });
    });

    test('successful lookups are cached by hash for the TTL, then looked up again (revocation)', async () => {
      for (let i = 0; i < 5; i += 1) expect((await call(h.app, 'GET', '/v1/workspace', { apiKey: validApiKey })).status).toBe(200);
      const lookups = h.fake.callsOf('AuthenticateApiKey').length;
      expect(lookups).toBeLessThanOrEqual(1);
      // Revoke: the backend now refuses the key; it keeps working at most for the TTL (1 s here).
      h.fake.handlers.set('AuthenticateApiKey', () => {
        throw new RpcFailure(grpc.status.UNAUTHENTICATED, 'revoked');
      });
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await call(h.app, 'GET', '/v1/workspace', { apiKey: validApiKey })).status).toBe(401);
      fakeCredentials(h.fake);
    });

    test('concurrent first requests share one lookup', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1100));
      h.fake.calls.length = 0;
      const responses = await Promise.all(Array.from({ length: 8 }, () => call(h.app, 'GET', '/v1/workspace', { apiKey: validApiKey })));
      expect(responses.every((response) => response.status === 200)).toBe(true);
      expect(h.fake.callsOf('AuthenticateApiKey')).toHaveLength(1);
    });

    test('the backend being down is 503, not 401', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1100));
      h.fake.handlers.set('AuthenticateApiKey', () => {
        throw new RpcFailure(grpc.status.UNAVAILABLE, 'db down');
      });
      const response = await call(h.app, 'GET', '/v1/workspace', { apiKey: validApiKey });
      expect(response.status).toBe(503);
      expect(response.json).toEqual({ error: 'service temporarily unavailable' });
      fakeCredentials(h.fake);
    });

    test('API keys have full access, including writes', async () => {
      const response = await call(h.app, 'POST', '/v1/projects', { apiKey: validApiKey, body: { name: 'P' } });
      expect(response.status).toBe(201);
    });
  });

  describe('Bearer token', () => {
    const bearer = (token: string, workspaceId: string = ids.workspace) => ({ bearer: token, workspaceId });

    test('read scope may GET', async () => {
      const token = await signToken(h.key, { sub: ids.user, scope: 'read' });
      const response = await call(h.app, 'GET', '/v1/workspace', bearer(token));
      expect(response.status).toBe(200);
      expect(h.fake.callsOf('GetMembership')).toEqual([{ workspaceId: ids.workspace, userId: ids.user }]);
    });

    test('read scope may not write → 403 insufficient_scope', async () => {
      const token = await signToken(h.key, { sub: ids.user, scope: 'read' });
      const response = await call(h.app, 'POST', '/v1/projects', { ...bearer(token), body: { name: 'P' } });
      expect(response.status).toBe(403);
      expect(response.json).toEqual({ error: expect.stringContaining('"write" is required') });
      expect(response.headers['www-authenticate']).toContain('insufficient_scope');
      expect(h.fake.callsOf('CreateProject')).toHaveLength(0);
    });

    test('write implies read; scope is space-delimited', async () => {
      const token = await signToken(h.key, { sub: ids.user, scope: 'openid write' });
      expect((await call(h.app, 'GET', '/v1/workspace', bearer(token))).status).toBe(200);
      expect((await call(h.app, 'POST', '/v1/projects', { ...bearer(token), body: { name: 'P' } })).status).toBe(201);
    });

    test('no usable scope → 403 even on GET', async () => {
      const token = await signToken(h.key, { sub: ids.user, scope: 'profile' });
      expect((await call(h.app, 'GET', '/v1/workspace', bearer(token))).status).toBe(403);
    });

    test('missing X-Workspace-Id → 400', async () => {
      const token = await signToken(h.key, { sub: ids.user, scope: 'read' });
      const response = await call(h.app, 'GET', '/v1/workspace', { bearer: token });
      expect(response.status).toBe(400);
      expect(response.json).toEqual({ error: 'X-Workspace-Id header is required with a Bearer token' });
    });

    test('not a member → 403; a malformed workspace id is not a membership either', async () => {
      const token = await signToken(h.key, { sub: ids.user, scope: 'read write' });
      const other = await call(h.app, 'GET', '/v1/workspace', bearer(token, ids.project));
      expect(other.status).toBe(403);
      expect(other.json).toEqual({ error: 'not a member of this workspace' });
      const malformed = await call(h.app, 'GET', '/v1/workspace', bearer(token, 'not-a-uuid'));
      expect(malformed.status).toBe(403);
    });

    test.each([
      ['expired', { expiresIn: Math.floor(Date.now() / 1000) - 60 }],
      ['wrong issuer', { iss: 'someone-else' }],
      ['wrong audience', { aud: 'another-api' }],
    ])('%s → 401 invalid_token', async (_name, claims) => {
      const token = await signToken(h.key, { sub: ids.user, scope: 'read', ...claims });
      const response = await call(h.app, 'GET', '/v1/workspace', bearer(token));
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toContain('invalid_token');
    });

    test('expiry within the clock tolerance is accepted', async () => {
      const token = await signToken(h.key, { sub: ids.user, scope: 'read', expiresIn: Math.floor(Date.now() / 1000) - 2 });
      expect((await call(h.app, 'GET', '/v1/workspace', bearer(token))).status).toBe(200);
    });

    test('no sub → 401', async () => {
      const token = await signToken(h.key, { scope: 'read' });
      expect((await call(h.app, 'GET', '/v1/workspace', bearer(token))).status).toBe(401);
    });

    test('a token signed by another key → 401', async () => {
      const token = await signToken(ed25519Key(), { sub: ids.user, scope: 'read' });
      expect((await call(h.app, 'GET', '/v1/workspace', bearer(token))).status).toBe(401);
    });

    test('alg none and HS256 are refused', async () => {
      const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      const claims = { iss: jwtIssuer, aud: jwtAudience, sub: ids.user, scope: 'read write', iat: now, exp: now + 300 };
      const unsecured = `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`;
      expect((await call(h.app, 'GET', '/v1/workspace', bearer(unsecured))).status).toBe(401);
      const hmac = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('x'.repeat(32)));
      expect((await call(h.app, 'GET', '/v1/workspace', bearer(hmac))).status).toBe(401);
    });

    test('a garbage Authorization header → 401', async () => {
      expect((await call(h.app, 'GET', '/v1/workspace', { headers: { authorization: 'Basic dXNlcjpwYXNz' } })).status).toBe(401);
      expect((await call(h.app, 'GET', '/v1/workspace', bearer('abc.def.ghi'))).status).toBe(401);
    });

    test('membership answers are cached briefly', async () => {
      const token = await signToken(h.key, { sub: ids.user, scope: 'read' });
      await call(h.app, 'GET', '/v1/workspace', bearer(token));
      h.fake.calls.length = 0;
      for (let i = 0; i < 3; i += 1) await call(h.app, 'GET', '/v1/workspace', bearer(token));
      expect(h.fake.callsOf('GetMembership')).toHaveLength(0);
    });

    test('Bearer on /v1/webhooks* → 403; the API key passes', async () => {
      // The real GET /v1/webhooks plus stand-in routes that need no backend: the policy is the
      // route's declaration (`config.auth`), not its URL.
      const keysOnly = { auth: { apiKeyOnly: 'webhooks are managed with an API key' } };
      const withWebhooks = await startGateway({}, async (app) => {
        await app.register(
          async (v1) => {
            v1.post('/webhooks/:id/ping', { config: keysOnly }, async () => ({ ok: true }));
            v1.get('/elsewhere', { config: { auth: { apiKeyOnly: 'API keys only here' } } }, async () => ({ ok: true }));
            v1.get('/webhooks-like', { config: { auth: true } }, async () => ({ ok: true }));
          },
          { prefix: '/v1' },
        );
      });
      try {
        fakeCredentials(withWebhooks.fake);
        const token = await signToken(withWebhooks.key, { sub: ids.user, scope: 'read write' });
        const get = await call(withWebhooks.app, 'GET', '/v1/webhooks', bearer(token));
        expect(get.status).toBe(403);
        expect(get.json).toEqual({ error: 'webhooks are managed with an API key' });
        expect((await call(withWebhooks.app, 'POST', '/v1/webhooks/x/ping', bearer(token))).status).toBe(403);
        expect((await call(withWebhooks.app, 'POST', '/v1/webhooks/x/ping', { apiKey: validApiKey })).status).toBe(200);
        const elsewhere = await call(withWebhooks.app, 'GET', '/v1/elsewhere', bearer(token));
        expect(elsewhere.status).toBe(403);
        expect(elsewhere.json).toEqual({ error: 'API keys only here' });
        expect((await call(withWebhooks.app, 'HEAD', '/v1/elsewhere', bearer(token))).status).toBe(403);
        expect((await call(withWebhooks.app, 'GET', '/v1/elsewhere', { apiKey: validApiKey })).status).toBe(200);
        expect((await call(withWebhooks.app, 'GET', '/v1/webhooks-like', bearer(token))).status).toBe(200);
        expect((await call(withWebhooks.app, 'GET', '/v1/webhooks-like')).status).toBe(401);
      } finally {
        await withWebhooks.close();
      }
    });
  });

  test('every /v1 operation but the capability download URL refuses a request without credentials (401), HEAD included', async () => {
    const spec = (await h.app.inject({ url: '/openapi.json' })).json<{ paths: Record<string, Record<string, unknown>> }>();
    let checked = 0;
    for (const [path, item] of Object.entries(spec.paths)) {
      const url = path.replace(/\{[^}]+\}/g, ids.task);
      for (const method of Object.keys(item)) {
        const methods = method === 'get' ? ['GET', 'HEAD'] : [method.toUpperCase()];
        for (const verb of methods) {
          const response = await call(h.app, verb, url, verb === 'POST' || verb === 'PATCH' ? { body: {} } : {});
          if (path === '/v1/attachments/{id}/content') expect(response.status, `${verb} ${path}`).toBe(404);
          else expect(response.status, `${verb} ${path}`).toBe(401);
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(25);
    expect(h.fake.calls).toEqual([]);
  });
});

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
    const h = await startGateway({ AUTH_JWT_PUBLIC_KEY: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString() });
    try {
      fakeCredentials(h.fake);
      h.fake.handlers.set('GetWorkspace', () => workspaceJson);
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

describe('failed authentications per IP', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startGateway({ AUTH_FAILURES_PER_MINUTE: '5' });
    fakeCredentials(h.fake);
    h.fake.handlers.set('GetWorkspace', () => workspaceJson);
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
    h = await startGateway({ AUTH_FAILURES_PER_MINUTE: '5' });
    fakeCredentials(h.fake);
    h.fake.handlers.set('GetWorkspace', () => workspaceJson);
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
    const h = await startGateway({ AUTH_JWT_PUBLIC_KEY: '', AUTH_JWT_JWKS_URL: url });
    try {
      fakeCredentials(h.fake);
      h.fake.handlers.set('GetWorkspace', () => workspaceJson);
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
