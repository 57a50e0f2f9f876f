import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hashSessionToken } from '../domain/sessions.js';
import { adminClient, signIn, startWeb, uniqueEmail, type WebHarness } from '../testing/harness.js';

/** Sessions against the test stack's Postgres (schema web) and its tasks service. */
const stack = inject('stack');
let h: WebHarness;
const admin = adminClient(stack);
const email = uniqueEmail('session');

beforeAll(async () => {
  h = await startWeb(stack, { SESSION_IDLE_TIMEOUT_S: '600', SESSION_ABSOLUTE_TIMEOUT_S: '3600' });
  await admin.createWorkspace(`Sessions ${process.pid}`, email);
});
afterAll(async () => {
  admin.close();
  await h.close();
});

const age = (token: string, column: 'last_seen_at' | 'created_at', seconds: number) =>
  h.db.query(`UPDATE sessions SET ${column} = now() - make_interval(secs => $2) WHERE id_hash = $1`, [hashSessionToken(token), seconds]);
const rowOf = async (token: string) =>
  (await h.db.query<{ email: string; last_seen_at: Date }>('SELECT email, last_seen_at FROM sessions WHERE id_hash = $1', [hashSessionToken(token)])).rows[0];

describe('sessions', () => {
  it('a sign-in stores only the hash of a 256-bit token, with the person’s email, and sets an HttpOnly, SameSite=Lax, Path=/ cookie', async () => {
    const response = await h.app.inject({ url: `/test/sign-in?email=${encodeURIComponent(email.toUpperCase())}` });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/workspaces');
    const [cookie] = response.cookies;
    expect(cookie).toMatchObject({ name: 'tws_session', path: '/', httpOnly: true, sameSite: 'Lax' });
    expect(cookie?.secure).toBeUndefined(); // http://127.0.0.1 (the https case: below)
    expect(cookie?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(cookie!.value, 'base64url')).toHaveLength(32);
    expect(await rowOf(cookie!.value)).toMatchObject({ email });
    const stored = await h.db.query('SELECT 1 FROM sessions WHERE id_hash = $1', [Buffer.from(cookie!.value, 'base64url')]);
    expect(stored.rowCount).toBe(0);
  });

  it('a live session reaches the workspace list; last_seen_at moves on when it is older than the touch interval', async () => {
    const person = await signIn(h, email);
    await age(person.token, 'last_seen_at', 300);
    const page = await h.app.inject({ url: '/workspaces', headers: { cookie: person.cookie } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`Sessions ${process.pid}`);
    const row = await rowOf(person.token);
    expect(Date.now() - row!.last_seen_at.getTime()).toBeLessThan(10_000);
  });

  it.each([
    ['idle longer than SESSION_IDLE_TIMEOUT_S', 'last_seen_at', 601],
    ['older than SESSION_ABSOLUTE_TIMEOUT_S, though just used', 'created_at', 3601],
  ] as const)('a session %s is refused: sign in again, cookie cleared', async (_label, column, seconds) => {
    const person = await signIn(h, email);
    expect((await h.app.inject({ url: '/workspaces', headers: { cookie: person.cookie } })).statusCode).toBe(200);
    await age(person.token, column, seconds);
    const response = await h.app.inject({ url: '/workspaces', headers: { cookie: person.cookie } });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/?returnTo=%2Fworkspaces&notice=session-ended');
    const cleared = response.cookies.find((cookie) => cookie.name === 'tws_session');
    expect(cleared).toMatchObject({ value: '', path: '/', httpOnly: true, sameSite: 'Lax' });
    expect(cleared!.expires!.getTime()).toBeLessThan(Date.now());
    const landing = await h.app.inject({ url: response.headers.location! });
    expect(landing.body).toContain('Your session ended. Sign in again to continue.');
    expect(landing.body).toContain('href="/auth/sign-in?returnTo=%2Fworkspaces"');
  });

  it('an unknown or malformed cookie is no session', async () => {
    for (const value of ['A'.repeat(43), 'short', '../../etc']) {
      const response = await h.app.inject({ url: '/workspaces', headers: { cookie: `tws_session=${value}` } });
      expect(response.statusCode).toBe(303);
    }
  });

  it('the sweeper deletes ended sessions and only those', async () => {
    const live = await signIn(h, email);
    const idle = await signIn(h, email);
    const old = await signIn(h, email);
    await age(idle.token, 'last_seen_at', 601);
    await age(old.token, 'created_at', 3601);
    expect(await h.app.sessions.sweep()).toBeGreaterThanOrEqual(2);
    expect(await rowOf(live.token)).toBeDefined();
    expect(await rowOf(idle.token)).toBeUndefined();
    expect(await rowOf(old.token)).toBeUndefined();
  });

  it('signing in again replaces the browser’s session (a new id, the old one ended)', async () => {
    const first = await signIn(h, email);
    const again = await h.app.inject({ url: `/test/sign-in?email=${encodeURIComponent(email)}`, headers: { cookie: first.cookie } });
    const second = again.cookies.find((cookie) => cookie.name === 'tws_session')!;
    expect(second.value).not.toBe(first.token);
    expect(await rowOf(first.token)).toBeUndefined();
    expect(await rowOf(second.value)).toBeDefined();
  });

  it('a verified email of no member makes no session: a page says so', async () => {
    const stranger = uniqueEmail('stranger');
    const response = await h.app.inject({ url: `/test/sign-in?email=${encodeURIComponent(stranger)}` });
    expect(response.statusCode).toBe(403);
    expect(response.cookies).toEqual([]);
    expect(response.body).toContain(`There is no workspace for ${stranger}. Ask a workspace owner to add this email address`);
    expect((await h.db.query('SELECT 1 FROM sessions WHERE email = $1', [stranger])).rowCount).toBe(0);
  });

  it('an email the provider has not verified makes no session', async () => {
    const response = await h.app.inject({ url: `/test/sign-in?email=${encodeURIComponent(email)}&verified=false` });
    expect(response.statusCode).toBe(403);
    expect(response.cookies).toEqual([]);
    expect(response.body).toContain(`Your identity provider has not verified the email address ${email}. Verify it there, then sign in again.`);
  });
});

describe('behind https', () => {
  it('the session cookie is Secure with the __Host- prefix', async () => {
    const secure = await startWeb(stack, { APP_URL: 'https://app.example.com' });
    try {
      const response = await secure.app.inject({ url: `/test/sign-in?email=${encodeURIComponent(email)}` });
      const [cookie] = response.cookies;
      expect(cookie).toMatchObject({ name: '__Host-tws_session', path: '/', httpOnly: true, sameSite: 'Lax', secure: true });
      expect(cookie).not.toHaveProperty('domain');
      expect(response.headers['strict-transport-security']).toMatch(/max-age=31536000/);
    } finally {
      await secure.close();
    }
  });
});
