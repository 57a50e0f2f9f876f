import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hashSessionToken } from '../domain/sessions.js';
import { adminClient, appUrl, signIn, startWeb, uniqueEmail, type SignedIn, type WebHarness } from '../testing/harness.js';

/** CSRF: every POST needs this app's Origin (or Referer) and the session's token. */
const stack = inject('stack');
let h: WebHarness;
const admin = adminClient(stack);
const email = uniqueEmail('csrf');

beforeAll(async () => {
  h = await startWeb(stack);
  await admin.createWorkspace(`CSRF ${process.pid}`, email);
});
afterAll(async () => {
  admin.close();
  await h.close();
});

const form = 'application/x-www-form-urlencoded';
const alive = async (person: SignedIn) =>
  (await h.db.query('SELECT 1 FROM sessions WHERE id_hash = $1', [hashSessionToken(person.token)])).rowCount === 1;

function signOut(person: SignedIn, headers: Record<string, string>, body?: string) {
  return h.app.inject({
    method: 'POST',
    url: '/auth/sign-out',
    headers: { cookie: person.cookie, ...(body === undefined ? {} : { 'content-type': form }), ...headers },
    ...(body === undefined ? {} : { payload: body }),
  });
}

function expectRefused(response: Awaited<ReturnType<typeof signOut>>): void {
  expect(response.statusCode).toBe(403);
  expect(response.headers['content-type']).toMatch(/^text\/html/);
  expect(response.body).toContain('This form was sent from another site or has expired, so it was refused. Reload the page and try again.');
}

describe('CSRF', () => {
  it('the sign-out form of a page carries the token; posted from this origin it signs out', async () => {
    const person = await signIn(h, email);
    const page = await h.app.inject({ url: '/workspaces', headers: { cookie: person.cookie } });
    expect(page.body).toMatch(/<form method="post" action="\/auth\/sign-out" class="inline"><input type="hidden" name="_csrf" value="[A-Za-z0-9_-]{43}">/);
    const response = await signOut(person, { origin: appUrl }, `_csrf=${person.csrf}`);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/?notice=signed-out');
    expect(response.cookies.find((cookie) => cookie.name === 'tws_session')).toMatchObject({ value: '' });
    expect(await alive(person)).toBe(false);
    expect((await h.app.inject({ url: '/workspaces', headers: { cookie: person.cookie } })).statusCode).toBe(303);
  });

  it('the token may come in the X-CSRF-Token header; a same-origin Referer stands in for a missing Origin', async () => {
    const byHeader = await signIn(h, email);
    expect((await signOut(byHeader, { origin: appUrl, 'x-csrf-token': byHeader.csrf })).statusCode).toBe(303);
    const byReferer = await signIn(h, email);
    expect((await signOut(byReferer, { referer: `${appUrl}/workspaces` }, `_csrf=${byReferer.csrf}`)).statusCode).toBe(303);
  });

  it('no token → 403, the session lives on', async () => {
    const person = await signIn(h, email);
    expectRefused(await signOut(person, { origin: appUrl }, ''));
    expectRefused(await signOut(person, { origin: appUrl }));
    expect(await alive(person)).toBe(true);
  });

  it('another session’s token → 403', async () => {
    const person = await signIn(h, email);
    const other = await signIn(h, email);
    expectRefused(await signOut(person, { origin: appUrl }, `_csrf=${other.csrf}`));
    expect(await alive(person)).toBe(true);
  });

  it('a cross-site form post (wrong Origin) is refused even with the right token', async () => {
    const person = await signIn(h, email);
    expectRefused(await signOut(person, { origin: 'https://evil.example' }, `_csrf=${person.csrf}`));
    expectRefused(await signOut(person, { origin: 'http://127.0.0.1:8091' }, `_csrf=${person.csrf}`));
    expectRefused(await signOut(person, { origin: 'null' }, `_csrf=${person.csrf}`));
    expectRefused(await signOut(person, { referer: 'https://evil.example/page' }, `_csrf=${person.csrf}`));
    expect(await alive(person)).toBe(true);
  });

  it('neither Origin nor Referer → 403', async () => {
    const person = await signIn(h, email);
    expectRefused(await signOut(person, {}, `_csrf=${person.csrf}`));
    expect(await alive(person)).toBe(true);
  });

  it('every unsafe method is checked, on unknown routes too', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE', 'POST'] as const) {
      const response = await h.app.inject({ method, url: '/anything', headers: { origin: 'https://evil.example' } });
      expect(response.statusCode, method).toBe(403);
    }
  });

  it('a post without a session, from this origin, is refused too', async () => {
    const response = await h.app.inject({ method: 'POST', url: '/auth/sign-out', headers: { origin: appUrl, 'content-type': form }, payload: '_csrf=x' });
    expect(response.statusCode).toBe(403);
  });
});
