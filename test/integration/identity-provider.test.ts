import http from 'node:http';
import path from 'node:path';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startIdentityProvider, type RunningIdentityProvider } from '@tws/devstack';
import { launchBrowser, openPage, screenshot } from '../support/browser.js';

const stack = inject('stack');

/** A relying party's redirect endpoint on loopback: records every request it receives. */
async function startCallbackServer(): Promise<{ url: string; hits: URL[]; close(): Promise<void> }> {
  const hits: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    hits.push(url);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('test relying party: redirect received');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/auth/callback`,
    hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The authorization endpoint's answer to a request a browser would send, without following it. */
async function authorize(issuer: string, params: Record<string, string>): Promise<Response> {
  const url = new URL('/auth', issuer);
  url.search = new URLSearchParams(params).toString();
  return fetch(url, { redirect: 'manual' });
}

describe("the local stack's identity provider", () => {
  it('publishes discovery naming the code flow endpoints, S256 PKCE and the email/profile claims', async () => {
    const response = await fetch(`${stack.idp.issuer}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    const discovery = (await response.json()) as Record<string, unknown>;
    expect(discovery.issuer).toBe(stack.idp.issuer);
    for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri', 'end_session_endpoint']) {
      expect(discovery[endpoint], endpoint).toMatch(new RegExp(`^${stack.idp.issuer}/`));
    }
    expect(discovery.code_challenge_methods_supported).toEqual(['S256']);
    expect(discovery.response_types_supported).toEqual(['code']);
    expect(discovery.scopes_supported).toEqual(expect.arrayContaining(['openid', 'email', 'profile']));
    expect(discovery.claims_supported).toEqual(expect.arrayContaining(['sub', 'email', 'email_verified', 'name']));
    expect(discovery.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(['client_secret_basic', 'client_secret_post']));
    const jwks = (await (await fetch(String(discovery.jwks_uri))).json()) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys.length).toBeGreaterThan(0);
    expect(jwks.keys.every((key) => key.d === undefined)).toBe(true);
  });

  it("has the demo workspace's owner, member and guest as users, and the app's client", () => {
    expect(stack.idp.client.clientId).toBe('task-workspace-web');
    expect(stack.idp.client.clientSecret.length).toBeGreaterThanOrEqual(32);
    expect(stack.idp.users.map((user) => user.role)).toEqual(['owner', 'member', 'guest']);
    for (const user of stack.idp.users) expect(user.password.length).toBeGreaterThanOrEqual(12);
  });

  it('refuses a redirect URI that is not registered, with an error page and no redirect', async () => {
    const response = await authorize(stack.idp.issuer, {
      client_id: stack.idp.client.clientId,
      response_type: 'code',
      scope: 'openid email',
      redirect_uri: 'http://127.0.0.1:9/auth/callback',
      code_challenge: oidc.randomPKCECodeVerifier(),
      code_challenge_method: 'S256',
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toMatch(/redirect_uri/);
  });
});

describe('signing in through the provider as a relying party does (openid-client + chromium)', () => {
  let idp: RunningIdentityProvider;
  let callback: Awaited<ReturnType<typeof startCallbackServer>>;
  let browser: Browser;
  let config: oidc.Configuration;

  beforeAll(async () => {
    callback = await startCallbackServer();
    // Its own provider: the stack's has no redirect URI of this test's callback server.
    idp = await startIdentityProvider({ logDir: path.join(stack.logDir, 'identity-provider-test'), redirectUris: [callback.url] });
    browser = await launchBrowser();
    config = await oidc.discovery(new URL(idp.issuer), idp.client.clientId, idp.client.clientSecret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await idp?.stop();
    await callback?.close();
  });

  const owner = (): RunningIdentityProvider['users'][number] => idp.users.find((user) => user.role === 'owner')!;

  async function startSignIn(): Promise<{ url: URL; verifier: string; state: string; nonce: string }> {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callback.url,
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url, verifier, state, nonce };
  }

  it('signs the owner in: login page, code at the redirect URI, ID token with email, email_verified and name', async () => {
    const signIn = await startSignIn();
    const { page, close } = await openPage(browser, signIn.url.href);
    try {
      await expect.poll(() => page.locator('h1').textContent()).toBe('Sign in');
      expect(page.url()).toMatch(new RegExp(`^${idp.issuer}/interaction/`));
      await screenshot(page, 'idp-login');
      await page.getByLabel('Email').fill(owner().email);
      await page.getByLabel('Password').fill(owner().password);
      await Promise.all([page.waitForURL((url) => url.href.startsWith(callback.url)), page.getByRole('button', { name: 'Sign in' }).click()]);
      const redirect = new URL(page.url());
      expect(redirect.searchParams.get('state')).toBe(signIn.state);
      expect(redirect.searchParams.get('iss')).toBe(idp.issuer);
      expect(callback.hits.some((hit) => hit.searchParams.get('code') === redirect.searchParams.get('code'))).toBe(true);

      const tokens = await oidc.authorizationCodeGrant(config, redirect, {
        pkceCodeVerifier: signIn.verifier,
        expectedState: signIn.state,
        expectedNonce: signIn.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims()!;
      expect(claims.iss).toBe(idp.issuer);
      expect(claims.aud).toBe(idp.client.clientId);
      expect(claims.email).toBe(owner().email);
      expect(claims.email_verified).toBe(true);
      expect(claims.name).toBe(owner().name);
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      expect(userinfo).toMatchObject({ sub: claims.sub, email: owner().email, email_verified: true, name: owner().name });

      // A code works once.
      await expect(
        oidc.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: signIn.verifier, expectedState: signIn.state }),
      ).rejects.toMatchObject({ error: 'invalid_grant' });

      // Signed in at the provider, the next sign-in (even one asking for consent again) needs no
      // page: the app is first-party, its consent is granted without asking.
      const again = await startSignIn();
      again.url.searchParams.set('prompt', 'consent');
      await page.goto(again.url.href);
      await page.waitForURL((url) => url.href.startsWith(callback.url));
      const second = await oidc.authorizationCodeGrant(config, new URL(page.url()), {
        pkceCodeVerifier: again.verifier,
        expectedState: again.state,
        expectedNonce: again.nonce,
      });
      expect(second.claims()?.sub).toBe(claims.sub);
    } finally {
      await close();
    }
  });

  it('keeps a wrong password on the login page with an error, and sends no code', async () => {
    const signIn = await startSignIn();
    const hitsBefore = callback.hits.length;
    const { page, close } = await openPage(browser, signIn.url.href);
    try {
      await page.getByLabel('Email').fill(owner().email);
      await page.getByLabel('Password').fill(`${owner().password}-wrong`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Wrong email or password/);
      expect(page.url()).toMatch(new RegExp(`^${idp.issuer}/interaction/[^/]+/login$`));
      expect(await page.getByLabel('Email').inputValue()).toBe(owner().email);
      await screenshot(page, 'idp-login-wrong-password');
      expect(callback.hits.length).toBe(hitsBefore);
    } finally {
      await close();
    }
  });

  it('ends a sign-in after five wrong passwords with access_denied at the redirect URI, and no code', async () => {
    const signIn = await startSignIn();
    const { page, close } = await openPage(browser, signIn.url.href);
    try {
      for (let attempt = 1; attempt < 5; attempt++) {
        await page.getByLabel('Password').fill(`wrong-password-${attempt}`);
        await page.getByLabel('Email').fill(owner().email);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await expect.poll(() => page.getByRole('alert').textContent()).toContain(`(${5 - attempt} attempts left)`);
      }
      await page.getByLabel('Password').fill('wrong-password-5');
      await Promise.all([page.waitForURL((url) => url.href.startsWith(callback.url)), page.getByRole('button', { name: 'Sign in' }).click()]);
      const redirect = new URL(page.url());
      expect(redirect.searchParams.get('error')).toBe('access_denied');
      expect(redirect.searchParams.get('state')).toBe(signIn.state);
      expect(redirect.searchParams.get('code')).toBeNull();
    } finally {
      await close();
    }
  });

  it('refuses an authorization request without PKCE, or with the plain method, sending an error and no code', async () => {
    const base = { client_id: idp.client.clientId, response_type: 'code', scope: 'openid email profile', redirect_uri: callback.url, state: 's1' };
    for (const params of [base, { ...base, code_challenge: oidc.randomPKCECodeVerifier(), code_challenge_method: 'plain' }]) {
      const response = await authorize(idp.issuer, params);
      expect(response.status).toBe(303);
      const location = new URL(response.headers.get('location') ?? '');
      expect(location.href.startsWith(callback.url)).toBe(true);
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.get('error_description')).toMatch(/PKCE|code_challenge/);
      expect(location.searchParams.get('code')).toBeNull();
    }
  });

  it('refuses a redirect URI that is not registered, even on the same host', async () => {
    const response = await authorize(idp.issuer, {
      client_id: idp.client.clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: `${callback.url}/elsewhere`,
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });
});
