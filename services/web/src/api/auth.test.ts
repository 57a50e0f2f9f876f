import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWeb, type WebHarness } from '../testing/harness.js';

/**
 * The sign-in routes' own checks, with a provider that cannot be reached (the whole sign-in
 * through a real provider is the browser test).
 */
const stack = inject('stack');
let h: WebHarness;
beforeAll(async () => {
  h = await startWeb(stack, { SIGN_IN_RATE_LIMIT_PER_MINUTE: '3' });
});
afterAll(async () => h.close());

let ip = 0;
/** Each test from its own client address, so the rate limit of one does not reach another. */
const fromNewAddress = () => `10.0.0.${++ip}`;

describe('GET /auth/sign-in', () => {
  it.each([
    ['a scheme-relative URL', '//evil.example/x'],
    ['an absolute URL', 'https://evil.example/'],
    ['a backslash trick', '/\\evil.example'],
    ['a javascript: URL', 'javascript:alert(1)'],
  ])('refuses returnTo = %s (no open redirect), before going anywhere', async (_label, returnTo) => {
    const response = await h.app.inject({ url: `/auth/sign-in?returnTo=${encodeURIComponent(returnTo)}`, remoteAddress: fromNewAddress() });
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(response.cookies).toEqual([]);
    expect(response.body).toContain('This sign-in link would send you outside this app, so it was refused. Start again from the sign-in page.');
  });

  it('a provider that cannot be reached is a 503 page that says what to do', async () => {
    const response = await h.app.inject({ url: '/auth/sign-in?returnTo=%2Fworkspaces', remoteAddress: fromNewAddress() });
    expect(response.statusCode).toBe(503);
    expect(response.body).toContain('The identity provider could not be reached. Try again in a minute; if it keeps failing, tell your administrator.');
  });

  it('is rate limited per client IP: 429 with Retry-After and a sentence; another address is not', async () => {
    const address = fromNewAddress();
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await h.app.inject({ url: '/auth/sign-in', remoteAddress: address })).statusCode).toBe(503);
    }
    const limited = await h.app.inject({ url: '/auth/sign-in', remoteAddress: address });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body).toMatch(/Too many sign-in attempts came from your network\. Wait \d+ seconds?, then try again\./);
    expect((await h.app.inject({ url: '/auth/sign-in', remoteAddress: fromNewAddress() })).statusCode).toBe(503);
  });
});

describe('GET /auth/callback', () => {
  it('without the sign-in flow cookie (expired, or another browser): a page says to start again', async () => {
    const response = await h.app.inject({ url: '/auth/callback?code=abc&state=def', remoteAddress: fromNewAddress() });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('This sign-in took too long or was started in another browser tab. Start again from the sign-in page.');
    expect(response.cookies).toEqual([]);
  });

  it('a flow cookie that was tampered with is no flow', async () => {
    const response = await h.app.inject({ url: '/auth/callback?code=abc&state=def', headers: { cookie: 'tws_sign_in=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, remoteAddress: fromNewAddress() });
    expect(response.statusCode).toBe(400);
    const cleared = response.cookies.find((cookie) => cookie.name === 'tws_sign_in');
    expect(cleared).toMatchObject({ value: '', path: '/', httpOnly: true, sameSite: 'Lax' });
  });

  it('is rate limited per client IP too', async () => {
    const address = fromNewAddress();
    for (let attempt = 0; attempt < 3; attempt++) await h.app.inject({ url: '/auth/callback?code=a&state=b', remoteAddress: address });
    expect((await h.app.inject({ url: '/auth/callback?code=a&state=b', remoteAddress: address })).statusCode).toBe(429);
  });
});
