import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWeb, type WebHarness } from '../testing/harness.js';

const key = (kid: string) => ({ ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), kid });
/** Rotation: the new key first (it signs), the old one still published. */
const signingKeys = { keys: [key('new-key'), key('old-key')] };

/**
 * The authorization server's edges in-process (with the stack's Postgres): the registration rate
 * limit and bounds, and the pages that need a session. The whole flow through a browser is
 * test/e2e/oauth-server.test.ts.
 */
const stack = inject('stack');
let h: WebHarness;
beforeAll(async () => {
  h = await startWeb(stack, { OAUTH_REGISTRATION_RATE_LIMIT_PER_MINUTE: '2', OAUTH_SIGNING_KEYS: JSON.stringify(signingKeys) });
});
afterAll(async () => h.close());

const registration = { client_name: 'Limited', redirect_uris: ['http://127.0.0.1:5000/cb'] };

describe('POST /oauth/register', () => {
  it('is rate limited per client IP: the third in a minute gets 429 JSON with Retry-After', async () => {
    const register = (remoteAddress: string) =>
      h.app.inject({ method: 'POST', url: '/oauth/register', remoteAddress, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(registration) });
    expect((await register('10.1.0.1')).statusCode).toBe(201);
    expect((await register('10.1.0.1')).statusCode).toBe(201);
    const limited = await register('10.1.0.1');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json()).toMatchObject({ error: 'too_many_requests' });
    expect(limited.json<{ error_description: string }>().error_description).toMatch(/Wait \d+ seconds, then try again/);
    // Another address is not affected.
    expect((await register('10.1.0.2')).statusCode).toBe(201);
  });

  it('needs no Origin or CSRF token (other apps call it), and refuses a body over 16 KiB', async () => {
    const big = await h.app.inject({
      method: 'POST',
      url: '/oauth/register',
      remoteAddress: '10.1.0.3',
      headers: { 'content-type': 'application/json', origin: 'https://elsewhere.example' },
      payload: JSON.stringify({ ...registration, padding: 'x'.repeat(17_000) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('storage', () => {
  it('the sweeper deletes expired rows and old revoked-grant records, and keeps live ones', async () => {
    await h.db.query(`INSERT INTO oauth_models (model, id, payload, expires_at) VALUES
      ('AuthorizationCode', 'sweep-expired', '{}', now() - interval '1 second'),
      ('AuthorizationCode', 'sweep-live', '{}', now() + interval '1 minute')`);
    await h.db.query(`INSERT INTO oauth_revoked_grants (grant_id, revoked_at) VALUES ('sweep-old', now() - interval '2 days'), ('sweep-new', now())`);
    await h.app.connectedApps.sweep();
    const models = await h.db.query<{ id: string }>(`SELECT id FROM oauth_models WHERE id LIKE 'sweep-%' ORDER BY id`);
    expect(models.rows.map((row) => row.id)).toEqual(['sweep-live']);
    const revoked = await h.db.query<{ grant_id: string }>(`SELECT grant_id FROM oauth_revoked_grants WHERE grant_id LIKE 'sweep-%'`);
    expect(revoked.rows.map((row) => row.grant_id)).toEqual(['sweep-new']);
  });

  it('a registered client is kept 30 days without a grant, and while it has one', async () => {
    const registered = await h.app.inject({
      method: 'POST',
      url: '/oauth/register',
      remoteAddress: '10.1.0.9',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(registration),
    });
    const clientId = registered.json<{ client_id: string }>().client_id;
    const days = async (): Promise<number> =>
      Number((await h.db.query<{ days: string }>(`SELECT extract(epoch FROM expires_at - now()) / 86400 AS days FROM oauth_models WHERE model = 'Client' AND id = $1`, [clientId])).rows[0]!.days);
    expect(await days()).toBeCloseTo(30, 0);
    const grant = new h.app.oauthProvider.Grant({ accountId: 'someone', clientId });
    grant.addResourceScope(h.config.API_PUBLIC_BASE_URL, 'read');
    await grant.save();
    // The grant lives 30 days: the client at least 30 days beyond.
    expect(await days()).toBeCloseTo(60, 0);
  });

  it('the endpoints handed to oidc-provider are measured by route template', async () => {
    await h.app.inject({ url: '/oauth/jwks' });
    const metrics = await h.registry.metrics();
    expect(metrics).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/oauth\/\*"[^}]*status_code="200"/);
  });
});

describe('pages of the authorization server', () => {
  it('metadata is served at both well-known addresses with the issuer APP_URL', async () => {
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const response = await h.app.inject({ url });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ issuer: h.config.APP_URL, code_challenge_methods_supported: ['S256'] });
    }
  });

  it('publishes every signing key (public halves only), the signing one first', async () => {
    const jwks = (await h.app.inject({ url: '/oauth/jwks' })).json<{ keys: Array<Record<string, unknown>> }>();
    expect(jwks.keys.map((published) => published.kid)).toEqual(['new-key', 'old-key']);
    for (const published of jwks.keys) {
      expect(published).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      expect(published.d).toBeUndefined();
    }
  });

  it('signed out, an interaction and the connected apps send the person to sign in and back', async () => {
    for (const url of ['/oauth/interaction/abc123', '/account/connected-apps']) {
      const response = await h.app.inject({ url });
      expect(response.statusCode).toBe(303);
      expect(response.headers.location).toBe(`/?returnTo=${encodeURIComponent(url)}`);
    }
  });

  it('a consent or a disconnect posted from another site is refused (403)', async () => {
    for (const url of ['/oauth/interaction/abc123', '/account/connected-apps/g1/revoke']) {
      const response = await h.app.inject({
        method: 'POST',
        url,
        headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'decision=allow&access=read+write',
      });
      expect(response.statusCode).toBe(403);
    }
  });
});
