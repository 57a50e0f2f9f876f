import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';

/**
 * A public OAuth client of the app's authorization server (services/web), as a third-party app
 * or an MCP client runs it: dynamic registration, the authorization request with PKCE (S256),
 * the browser's trip through sign-in and consent, the token exchange.
 */
export interface OAuthMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint: string;
  revocation_endpoint: string;
  jwks_uri: string;
  [key: string]: unknown;
}

export interface PkcePair {
  verifier: string;
  challenge: string;
}

export function pkce(): PkcePair {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function metadataOf(appUrl: string): Promise<OAuthMetadata> {
  const response = await fetch(`${appUrl}/.well-known/oauth-authorization-server`);
  if (!response.ok) throw new Error(`metadata: ${response.status}`);
  return (await response.json()) as OAuthMetadata;
}

export async function register(metadata: OAuthMetadata, body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(metadata.registration_endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

export function authorizationUrl(metadata: OAuthMetadata, params: Record<string, string>): string {
  const url = new URL(metadata.authorization_endpoint);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.href;
}

export async function tokenRequest(metadata: OAuthMetadata, params: Record<string, string>): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(metadata.token_endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/**
 * Drives the browser from the authorization URL to the client's redirect URI: signs in at the
 * local identity provider when asked, chooses `access` on the consent page when it is shown, and
 * answers the redirect's query (code, state, iss or error). The redirect URI is the test's
 * `callbackServer` (it answers "connected").
 */
export async function authorizeInBrowser(
  page: Page,
  url: string,
  options: { redirectUri: string; user: { email: string; password: string }; access: 'read' | 'read write' | 'deny'; onConsent?: (page: Page) => Promise<void> },
): Promise<URLSearchParams> {
  let landed: URL | undefined;
  const reached = (): boolean => {
    if (!landed && page.url().startsWith(options.redirectUri)) landed = new URL(page.url());
    return landed !== undefined;
  };
  await page.goto(url);
  const signIn = page.getByRole('link', { name: 'Sign in with your organisation' });
  const password = page.locator('#password');
  const allow = page.getByRole('button', { name: 'Allow' });
  for (let step = 0; step < 6 && !reached(); step++) {
    await signIn.or(password).or(allow).or(page.getByText('connected', { exact: true })).first().waitFor({ timeout: 10_000 }).catch(() => undefined);
    if (reached()) break;
    const before = page.url();
    if (await signIn.isVisible()) {
      await signIn.click();
    } else if (await password.isVisible()) {
      await page.locator('#email').fill(options.user.email);
      await password.fill(options.user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    } else if (await allow.isVisible()) {
      await options.onConsent?.(page);
      if (options.access === 'deny') {
        await page.getByRole('button', { name: 'Deny' }).click();
      } else {
        await page.locator(`input[name=access][value="${options.access}"]`).check();
        await allow.click();
      }
    } else {
      break;
    }
    await page.waitForURL((current) => current.href !== before, { timeout: 15_000 });
  }
  if (!reached()) throw new Error(`the browser did not reach ${options.redirectUri}; it is at ${page.url()}: ${(await page.textContent('main').catch(() => '')) ?? ''}`);
  return (landed as URL).searchParams;
}

/** The client's redirect URI: a loopback HTTP server that answers every request with "connected". */
export async function callbackServer(): Promise<{ redirectUri: string; close(): Promise<void> }> {
  const server = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('connected'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
