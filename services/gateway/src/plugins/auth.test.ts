/*
 * The auth plugin with API keys and Bearer tokens through one gateway: a key reaches its workspace,
 * missing or unknown credentials are 401 (before any body check), key lookups are cached for their
 * TTL and shared by concurrent requests, a backend outage is 503; a token's scope decides reads and
 * writes, its workspace must be one of the subject's, bad tokens are 401 invalid_token, and routes
 * declared API-key-only refuse Bearer tokens; every /v1 operation needs credentials. Other token key
 * configurations are in auth-token-keys.test.ts, failed authentications per IP in
 * auth-failures.test.ts.
 */
import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startAuthGateway } from '../testing/auth-gateway.js';
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

describe('auth plugin', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startAuthGateway({ AUTH_FAILURES_PER_MINUTE: '10000', AUTH_API_KEY_CACHE_TTL_MS: '1000' });
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
