import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger, startOpsServer } from '@tws/common';
import { adminClient, signIn, startWeb, uniqueEmail, type SignedIn, type WebHarness } from '../testing/harness.js';

/** The pages with a real session, the real tasks service and its Postgres. */
const stack = inject('stack');
let h: WebHarness;
const admin = adminClient(stack);
const email = uniqueEmail('pages');
const hostileName = `<script>alert("pwned")</script> & <img src=x onerror=alert(1)> ${process.pid}`;
let person: SignedIn;
let hostile: { urlId: string };
let other: { urlId: string };

beforeAll(async () => {
  h = await startWeb(stack);
  hostile = await admin.createWorkspace(hostileName, email);
  const guestOf = await admin.createWorkspace(`Beta ${process.pid}`, uniqueEmail('beta-owner'));
  await admin.addMember(guestOf.id, email, 'ROLE_GUEST');
  other = await admin.createWorkspace(`Not yours ${process.pid}`, uniqueEmail('other-owner'));
  person = await signIn(h, email);
});
afterAll(async () => {
  admin.close();
  await h.close();
});

const get = (url: string, cookie?: string) => h.app.inject({ url, headers: cookie ? { cookie } : {} });

describe('pages', () => {
  it('the landing page offers sign-in, with security headers and no script', async () => {
    const response = await get('/');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toContain("default-src 'self'");
    expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response.headers['content-security-policy']).toContain("script-src 'none'");
    expect(response.headers['referrer-policy']).toBe('same-origin');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toContain('<a class="button" href="/auth/sign-in">Sign in with your organisation</a>');
    expect(response.body).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(response.body).not.toContain('<script');
  });

  it('an unsafe returnTo on the landing page is dropped, a safe one is kept', async () => {
    expect((await get('/?returnTo=%2F%2Fevil.example')).body).toContain('href="/auth/sign-in"');
    expect((await get('/?returnTo=https%3A%2F%2Fevil.example')).body).not.toContain('evil');
    expect((await get('/?returnTo=%2Facme%2Fsettings')).body).toContain('href="/auth/sign-in?returnTo=%2Facme%2Fsettings"');
  });

  it('signed in, / goes to the workspace list', async () => {
    const response = await get('/', person.cookie);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/workspaces');
  });

  it('the workspace list shows every workspace with the role, and a hostile name only as text', async () => {
    const response = await get('/workspaces', person.cookie);
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toContain('<script>alert');
    expect(response.body).not.toContain('<img src=x');
    expect(response.body).toContain('&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;');
    expect(response.body).toContain(`<a href="/${hostile.urlId}/settings">`);
    expect(response.body).toMatch(/Your role: Owner/);
    expect(response.body).toMatch(/Your role: Guest/);
    expect(response.body).toContain(`Beta ${process.pid}`);
    expect(response.body).not.toContain(`Not yours ${process.pid}`);
    expect(response.body).toContain(`<span class="who">${email}</span>`);
  });

  it('a workspace’s settings index links to its API keys, with the switcher; not a member is the same 404 as nothing at all', async () => {
    const settings = await get(`/${hostile.urlId}/settings`, person.cookie);
    expect(settings.statusCode).toBe(200);
    expect(settings.body).toContain(`<a href="/${hostile.urlId}/settings/api-keys">API keys</a>`);
    expect(settings.body).toContain(`<a href="/${hostile.urlId}/settings" aria-current="page">`);
    expect(settings.body).not.toContain('<script>alert');
    const notMine = await get(`/${other.urlId}/settings`, person.cookie);
    const nothing = await get('/no-such-workspace/settings', person.cookie);
    expect(notMine.statusCode).toBe(404);
    expect(nothing.statusCode).toBe(404);
    expect(notMine.body).toBe(nothing.body);
    expect(notMine.body).toContain('There is no page at this address.');
  });

  it('signed out, a settings page sends the person to sign in and back', async () => {
    const response = await get(`/${hostile.urlId}/settings`);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(`/?returnTo=${encodeURIComponent(`/${hostile.urlId}/settings`)}`);
  });

  it('unknown pages are a 404 page that says what to do', async () => {
    const response = await get('/nowhere');
    expect(response.statusCode).toBe(404);
    expect(response.body).toContain('<h1 id="error-title">Page not found</h1>');
    expect(response.body).toContain('There is no page at this address. Check the link, or go back to the start.');
  });

  it('the stylesheet is served from this origin, without a session lookup', async () => {
    const response = await get('/assets/app.css', 'tws_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(response.body).toContain(':focus-visible');
    expect(response.cookies).toEqual([]);
  });

  it('the signed-in pages keep answering with one session, request after request', async () => {
    // Speed is measured by bench/web (`BENCH_ONLY=web npm run bench`), not asserted here.
    const urls = ['/', '/workspaces', `/${hostile.urlId}/settings`, `/${hostile.urlId}/settings/api-keys`];
    for (let round = 0; round < 3; round++) {
      for (const url of urls) expect((await get(url, person.cookie)).statusCode, url).toBeLessThan(400);
    }
  });
});

describe('ops', () => {
  it('/readyz on the ops port checks the service’s Postgres; /metrics has the route histogram and sign-in outcomes', async () => {
    const logger = createLogger('web-test');
    logger.level = 'silent';
    const ops = await startOpsServer({ host: '127.0.0.1', port: 0, registry: h.registry, readiness: h.app.readiness, logger });
    try {
      const ready = await fetch(`http://127.0.0.1:${ops.port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ok', checks: { postgres: 'ok' } });
      const metrics = await (await fetch(`http://127.0.0.1:${ops.port}/metrics`)).text();
      expect(metrics).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/workspaces"[^}]*status_code="200"/);
      expect(metrics).toMatch(/web_sign_ins_total\{[^}]*outcome="signed_in"[^}]*\} [1-9]/);
      expect(metrics).toMatch(/grpc_client_handling_seconds_count\{[^}]*grpc_method="ListMembershipsByEmail"/);
    } finally {
      await ops.close();
    }
  });
});
