/**
 * The service's own OAuth 2.0 authorization server (services/web, oidc-provider) through the
 * real stack: metadata, dynamic registration, the code flow with PKCE in headless chromium
 * (sign-in at the local identity provider, consent), JWT access tokens verified against the
 * published JWKS, rotating refresh tokens, RFC 7009 revocation, the attacks, and the connected
 * apps page. Screenshots in test-results/screenshots/.
 */
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminCli } from '../support/admin.js';
import { launchBrowser, openPage, screenshot, type OpenedPage } from '../support/browser.js';
import { authorizationUrl, callbackServer, authorizeInBrowser, metadataOf, pkce, register, tokenRequest, type OAuthMetadata } from '../support/oauth.js';

const stack = inject('stack');
const webUrl = stack.webUrl;
const baseUrl = stack.gatewayUrl;
const member = stack.idp.users.find((user) => user.role === 'member')!;
let redirectUri: string;
let callback: Awaited<ReturnType<typeof callbackServer>>;

let browser: Browser;
let metadata: OAuthMetadata;
let memberUserId: string;
let workspaceId: string;
let db: pg.Pool;
let clientId: string;
let opened: OpenedPage;

beforeAll(async () => {
  const owner = stack.idp.users.find((user) => user.role === 'owner')!;
  const created = await adminCli(['workspace', 'create', '--name', 'OAuth Workspace', '--plan', 'pro', '--owner-email', owner.email, '--owner-name', owner.name]);
  expect(created.code, JSON.stringify(created.json)).toBe(0);
  workspaceId = (created.json as { workspace: { id: string } }).workspace.id;
  const added = await adminCli(['member', 'add', '--workspace', workspaceId, '--email', member.email, '--name', member.name, '--role', 'member']);
  expect(added.code, JSON.stringify(added.json)).toBe(0);
  memberUserId = (added.json as { member: { userId: string } }).member.userId;
  expect(memberUserId).toMatch(/\S/);
  metadata = await metadataOf(webUrl);
  callback = await callbackServer();
  redirectUri = callback.redirectUri;
  db = new pg.Pool({ connectionString: stack.databaseUrl, max: 2, options: '-c search_path=web' });
  browser = await launchBrowser();
  opened = await openPage(browser);
  const registered = await register(metadata, { client_name: 'Test MCP Client', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' });
  expect(registered.status, JSON.stringify(registered.json)).toBe(201);
  clientId = String(registered.json.client_id);
});
afterAll(async () => {
  await opened?.close();
  await browser?.close();
  await db?.end();
  await callback?.close();
});

/** A full authorization in the signed-in browser: answers the code's exchange. */
async function connect(page: Page, access: 'read' | 'read write', onConsent?: (page: Page) => Promise<void>) {
  const { verifier, challenge } = pkce();
  const state = `s-${Math.random().toString(36).slice(2)}`;
  const url = authorizationUrl(metadata, { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'read write', state, code_challenge: challenge, code_challenge_method: 'S256', resource: baseUrl });
  const answer = await authorizeInBrowser(page, url, { redirectUri, user: member, access, ...(onConsent ? { onConsent } : {}) });
  expect(answer.get('error'), answer.get('error_description') ?? '').toBeNull();
  expect(answer.get('state')).toBe(state);
  expect(answer.get('iss')).toBe(webUrl);
  const code = answer.get('code')!;
  const exchanged = await tokenRequest(metadata, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier });
  expect(exchanged.status, JSON.stringify(exchanged.json)).toBe(200);
  return { code, verifier, tokens: exchanged.json as { access_token: string; refresh_token: string; scope: string; expires_in: number; token_type: string } };
}

/** GET /v1/workspace at the gateway with this access token: its status. */
const apiStatus = async (accessToken: string): Promise<number> =>
  (await fetch(`${baseUrl}/v1/workspace`, { headers: { authorization: `Bearer ${accessToken}`, 'x-workspace-id': workspaceId } })).status;

/** The status the gateway gives this access token once it is no longer 200, within `ms`. */
async function statusOnceRefused(accessToken: string, ms = 10_000): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const status = await apiStatus(accessToken);
    if (status !== 200 || Date.now() > until) return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const revokedGrant = async (grantId: string): Promise<boolean> =>
  (await db.query('SELECT 1 FROM oauth_revoked_grants WHERE grant_id = $1', [grantId])).rowCount === 1;

describe('metadata', () => {
  it('RFC 8414 and OpenID discovery at the app URL: code + PKCE S256 only, registration, revocation, JWKS', async () => {
    expect(metadata).toMatchObject({
      issuer: webUrl,
      authorization_endpoint: `${webUrl}/oauth/authorize`,
      token_endpoint: `${webUrl}/oauth/token`,
      registration_endpoint: `${webUrl}/oauth/register`,
      revocation_endpoint: `${webUrl}/oauth/revoke`,
      jwks_uri: `${webUrl}/oauth/jwks`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      token_endpoint_auth_methods_supported: ['none'],
    });
    expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    expect(metadata.grant_types_supported).not.toContain('implicit');
    expect(metadata.grant_types_supported).not.toContain('password');
    const oidc = (await (await fetch(`${webUrl}/.well-known/openid-configuration`)).json()) as OAuthMetadata;
    expect(oidc.issuer).toBe(webUrl);
    expect(oidc.token_endpoint).toBe(metadata.token_endpoint);
    // The URLs never come from the request's Host.
    const spoofed = (await (await fetch(`${webUrl}/.well-known/oauth-authorization-server`, { headers: { 'x-forwarded-host': 'evil.example' } })).json()) as OAuthMetadata;
    expect(spoofed.token_endpoint).toBe(metadata.token_endpoint);
    const jwks = (await (await fetch(metadata.jwks_uri)).json()) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const key of jwks.keys) expect(key.d).toBeUndefined();
  });
});

describe('dynamic registration (RFC 7591)', () => {
  it('registers a public client with loopback and https redirect URIs', async () => {
    const { status, json } = await register(metadata, { client_name: 'Another', redirect_uris: ['http://localhost:9999/cb', 'https://app.example.com/cb'] });
    expect(status).toBe(201);
    expect(json).toMatchObject({ token_endpoint_auth_method: 'none', client_name: 'Another' });
    expect(json.client_secret).toBeUndefined();
  });

  it.each([
    ['http to a non-loopback host', { redirect_uris: ['http://app.example.com/cb'] }, 'invalid_redirect_uri'],
    ['a custom scheme', { redirect_uris: ['evil-app://cb'] }, 'invalid_redirect_uri'],
    ['no redirect URI', { redirect_uris: [] }, 'invalid_redirect_uri'],
    ['a confidential client', { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
    ['the implicit grant', { redirect_uris: ['https://a.example/cb'], grant_types: ['implicit'] }, 'invalid_client_metadata'],
  ])('refuses %s (400)', async (_name, body, error) => {
    const { status, json } = await register(metadata, body);
    expect(status).toBe(400);
    expect(json.error).toBe(error);
    expect(String(json.error_description)).toMatch(/\S/);
  });

  it('refuses an oversized body (413) and a non-JSON one (415)', async () => {
    const big = await fetch(metadata.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://a.example/cb'], client_name: 'x', padding: 'x'.repeat(20_000) }),
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: string }).error).toBe('invalid_request');
    const form = await fetch(metadata.registration_endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'redirect_uris=x' });
    expect(form.status).toBe(415);
  });
});

describe('the authorization code flow with PKCE', () => {
  it('signs in at the provider, consents to read write, and gets a JWT for the API (RFC 9068) and a refresh token', async () => {
    const { tokens } = await connect(opened.page, 'read write', async (page) => {
      expect(await page.getByRole('heading', { name: /Allow Test MCP Client/ }).isVisible()).toBe(true);
      expect(await page.getByText(new URL(redirectUri).host).first().isVisible()).toBe(true);
      await screenshot(page, 'web-oauth-consent');
      const phone = await opened.context.newPage();
      await phone.setViewportSize({ width: 390, height: 800 });
      await phone.goto(page.url());
      expect(await phone.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await screenshot(phone, 'web-oauth-consent-phone');
      await phone.close();
    });
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read write' });
    const jwks = createRemoteJWKSet(new URL(metadata.jwks_uri));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, { issuer: webUrl, audience: baseUrl, typ: 'at+jwt' });
    expect(protectedHeader.typ).toBe('at+jwt');
    // Signed by the first key of OAUTH_SIGNING_KEYS (the first one the JWKS publishes).
    const published = (await (await fetch(metadata.jwks_uri)).json()) as { keys: Array<{ kid: string }> };
    expect(protectedHeader.kid).toBe(published.keys[0]!.kid);
    expect(payload).toMatchObject({ sub: memberUserId, scope: 'read write', client_id: clientId, aud: baseUrl, iss: webUrl });
    expect(typeof payload.jti).toBe('string');
    expect(typeof payload.grant_id).toBe('string');
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(Math.abs(payload.exp! - (Date.now() / 1000 + 3600))).toBeLessThan(60);
    expect(tokens.refresh_token).toMatch(/\S/);
  });

  it('a code is single use: replayed, it is refused', async () => {
    const { code, verifier } = await connect(opened.page, 'read write');
    const replay = await tokenRequest(metadata, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier });
    expect(replay.status).toBe(400);
    expect(replay.json.error).toBe('invalid_grant');
  });

  it('refresh rotates; a rotated refresh token used again revokes the whole grant', async () => {
    const { tokens } = await connect(opened.page, 'read write');
    const grantId = String(decodeJwt(tokens.access_token).grant_id);
    const first = await tokenRequest(metadata, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    const rotated = String(first.json.refresh_token);
    expect(rotated).not.toBe(tokens.refresh_token);
    expect(decodeJwt(String(first.json.access_token))).toMatchObject({ sub: memberUserId, scope: 'read write', aud: baseUrl });
    // Both access tokens of the grant work at the gateway until the reuse…
    expect(await apiStatus(tokens.access_token)).toBe(200);
    expect(await apiStatus(String(first.json.access_token))).toBe(200);
    const reused = await tokenRequest(metadata, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(reused.status).toBe(400);
    expect(reused.json.error).toBe('invalid_grant');
    const afterReuse = await tokenRequest(metadata, { grant_type: 'refresh_token', refresh_token: rotated, client_id: clientId });
    expect(afterReuse.status).toBe(400);
    expect(afterReuse.json.error).toBe('invalid_grant');
    expect(await revokedGrant(grantId)).toBe(true);
    // …after which the gateway refuses every token of the grant (announced to every replica).
    expect(await statusOnceRefused(tokens.access_token)).toBe(401);
    expect(await apiStatus(String(first.json.access_token))).toBe(401);
  });

  it('RFC 7009: a revoked refresh token no longer refreshes, and its grant is recorded as revoked', async () => {
    const { tokens } = await connect(opened.page, 'read write');
    const grantId = String(decodeJwt(tokens.access_token).grant_id);
    const revoked = await fetch(metadata.revocation_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token, token_type_hint: 'refresh_token', client_id: clientId }),
    });
    expect(revoked.status).toBe(200);
    const refresh = await tokenRequest(metadata, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(refresh.json.error).toBe('invalid_grant');
    expect(await revokedGrant(grantId)).toBe(true);
  });

  it('the person may grant read only', async () => {
    // A fresh person's browser: the consent is asked again for a new grant.
    const fresh = await openPage(browser);
    const { tokens } = await connect(fresh.page, 'read');
    expect(tokens.scope).toBe('read');
    expect(decodeJwt(tokens.access_token).scope).toBe('read');
    await fresh.close();
  });
});

describe('the app session decides who the person is', () => {
  it('signed out of the app, the next authorization asks to sign in again (no code from the provider’s own session)', async () => {
    const fresh = await openPage(browser);
    await connect(fresh.page, 'read');
    await fresh.page.goto(`${webUrl}/workspaces`);
    await fresh.page.getByRole('button', { name: 'Sign out' }).click();
    await fresh.page.waitForURL(`${webUrl}/?notice=signed-out`);
    const { challenge } = pkce();
    await fresh.page.goto(authorizationUrl(metadata, { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'read', state: 'again', code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(fresh.page.url()).toMatch(new RegExp(`^${webUrl}/\\?returnTo=%2Foauth%2Finteraction%2F`));
    expect(await fresh.page.getByRole('link', { name: 'Sign in with your organisation' }).isVisible()).toBe(true);
    await fresh.close();
  });
});

describe('the person denies', () => {
  it('the client gets access_denied and no code', async () => {
    const fresh = await openPage(browser);
    const { challenge } = pkce();
    const url = authorizationUrl(metadata, { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'read', state: 'd', code_challenge: challenge, code_challenge_method: 'S256' });
    const answer = await authorizeInBrowser(fresh.page, url, { redirectUri, user: member, access: 'deny' });
    expect(answer.get('error')).toBe('access_denied');
    expect(answer.get('code')).toBeNull();
    await fresh.close();
  });
});

describe('attacks on the authorization endpoint', () => {
  const base = (): Record<string, string> => ({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'read', state: 'x' });
  const authorize = (params: Record<string, string>) => fetch(authorizationUrl(metadata, params), { redirect: 'manual' });
  /** The error the client is sent back with: in the query, or in the fragment (implicit-style response modes). */
  const errorOf = (response: Response): string | null => {
    const location = new URL(response.headers.get('location') ?? 'http://none/');
    return location.searchParams.get('error') ?? new URLSearchParams(location.hash.slice(1)).get('error');
  };

  it('PKCE missing: refused', async () => {
    const response = await authorize(base());
    expect(response.status).toBe(303);
    expect(errorOf(response)).toBe('invalid_request');
  });

  it('PKCE plain: refused', async () => {
    const response = await authorize({ ...base(), code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' });
    expect(response.status).toBe(303);
    expect(errorOf(response)).toBe('invalid_request');
  });

  it('a redirect URI not registered: an error page, no redirect', async () => {
    const response = await authorize({ ...base(), redirect_uri: 'http://127.0.0.1:1/steal', code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toContain('Authorization refused');
  });

  it('the implicit flow and another audience are refused', async () => {
    const implicit = await authorize({ ...base(), response_type: 'token', code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    expect(implicit.status).toBe(303);
    expect(errorOf(implicit)).toBe('unsupported_response_type');
    expect(implicit.headers.get('location')).not.toMatch(/access_token|code=/);
    const other = await authorize({ ...base(), resource: 'https://elsewhere.example', code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    expect(errorOf(other)).toBe('invalid_target');
  });

  it('the password grant is refused', async () => {
    const response = await tokenRequest(metadata, { grant_type: 'password', username: member.email, password: member.password, client_id: clientId });
    expect(response.status).toBe(400);
    expect(response.json.error).toBe('unsupported_grant_type');
  });
});

describe('connected apps', () => {
  it('lists the person’s apps and disconnects one: its refresh token stops working and the grant is recorded', async () => {
    const { tokens } = await connect(opened.page, 'read write');
    const grantId = String(decodeJwt(tokens.access_token).grant_id);
    const page = opened.page;
    await page.goto(`${webUrl}/workspaces`);
    await page.getByRole('link', { name: 'Connected apps' }).click();
    await page.waitForURL(`${webUrl}/account/connected-apps`);
    const card = page.locator('li.card', { has: page.locator(`form[action$="/${grantId}/revoke"]`) });
    expect(await card.getByRole('heading', { name: 'Test MCP Client' }).isVisible()).toBe(true);
    expect(await card.getByText('Read and write').isVisible(), (await page.locator('main').textContent()) ?? '').toBe(true);
    await screenshot(page, 'web-connected-apps');
    const phone = await opened.context.newPage();
    await phone.setViewportSize({ width: 390, height: 800 });
    await phone.goto(`${webUrl}/account/connected-apps`);
    expect(await phone.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await screenshot(phone, 'web-connected-apps-phone');
    await phone.close();
    const cards = page.locator('li.card', { hasText: 'Test MCP Client' });
    const before = await cards.count();
    await page.locator(`form[action$="/${grantId}/revoke"] button`).click();
    await page.waitForURL(`${webUrl}/account/connected-apps?notice=revoked`);
    expect(await page.getByText('The app was disconnected').isVisible()).toBe(true);
    expect(await cards.count()).toBe(before - 1);
    const refresh = await tokenRequest(metadata, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(refresh.json.error).toBe('invalid_grant');
    expect(await revokedGrant(grantId)).toBe(true);
  });

  it('another person’s grant cannot be revoked (404) and a cross-site post is refused (403)', async () => {
    const page = opened.page;
    await page.goto(`${webUrl}/account/connected-apps`);
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const forged = await page.request.post(`${webUrl}/account/connected-apps/not-a-grant-of-yours/revoke`, {
      headers: { origin: webUrl },
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(404);
    const crossSite = await page.request.post(`${webUrl}/account/connected-apps/whatever/revoke`, { headers: { origin: 'https://evil.example' }, form: { _csrf: csrf }, maxRedirects: 0 });
    expect(crossSite.status()).toBe(403);
  });
});
