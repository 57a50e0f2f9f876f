import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminClient, asPeople, type SignedIn, signIn, startWeb, uniqueEmail, type WebHarness } from '../testing/harness.js';

/**
 * The API keys pages with real sessions, the real tasks service (SettingsService) and its Postgres:
 * owners see and revoke every key, members their own, guests are refused with no data, a forged
 * post is refused, everything is escaped. (The browser test uses a key against the gateway.)
 */
const stack = inject('stack');
let h: WebHarness;
const admin = adminClient(stack);
const emails = { owner: uniqueEmail('keys-owner'), member: uniqueEmail('keys-member'), guest: uniqueEmail('keys-guest') };
let people: Record<keyof typeof emails, SignedIn>;
let urlId: string;
let otherUrlId: string;

beforeAll(async () => {
  h = await startWeb(stack);
  const workspace = await admin.createWorkspace(`Keys page ${process.pid}`, emails.owner);
  urlId = workspace.urlId;
  await admin.addMember(workspace.id, emails.member, 'ROLE_MEMBER');
  await admin.addMember(workspace.id, emails.guest, 'ROLE_GUEST');
  otherUrlId = (await admin.createWorkspace(`Keys elsewhere ${process.pid}`, uniqueEmail('keys-other'))).urlId;
  people = { owner: await signIn(h, emails.owner), member: await signIn(h, emails.member), guest: await signIn(h, emails.guest) };
});
afterAll(async () => {
  admin.close();
  await h.close();
});

const { get, post } = asPeople(() => h);
const keysUrl = () => `/${urlId}/settings/api-keys`;
const createKey = async (person: SignedIn, name: string) => {
  const response = await post(keysUrl(), person, { name });
  expect(response.statusCode, response.body).toBe(201);
  const key = /id="new-key"[^>]*value="(tws_[0-9A-Za-z]{40})"/.exec(response.body)?.[1];
  expect(key).toBeDefined();
  return { response, key: key! };
};
/** The key ids of the revoke forms on a list page, in order. */
const listedIds = (body: string) => [...body.matchAll(/\/api-keys\/([0-9a-f-]{36})\/revoke/g)].map((match) => match[1]!);

describe('API keys pages', () => {
  it('the settings index links to the API keys; the owner’s list shows the workspace’s first key and a labelled create form', async () => {
    const index = await get(`/${urlId}/settings`, people.owner);
    expect(index.statusCode).toBe(200);
    expect(index.body).toContain(`<a href="/${urlId}/settings/api-keys">API keys</a>`);
    const list = await get(keysUrl(), people.owner);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('<th scope="row">Default key</th>');
    expect(list.body).toContain('<label for="key-name">Name</label>');
    expect(list.body).toContain(`name="_csrf" value="${people.owner.csrf}"`);
    expect(list.body).not.toContain('<script');
    expect(list.headers['content-security-policy']).toContain("script-src 'none'");
  });

  it('creating shows the key once (readonly input, the copy script allowed on that page only); the list shows its prefix, never the key', async () => {
    const hostile = '<img src=x onerror=alert(1)> "deploy"';
    const { response, key } = await createKey(people.owner, hostile);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['content-security-policy']).toContain("script-src 'self'");
    expect(response.body).toContain('<script src="/assets/copy-key.js" defer></script>');
    expect(response.body).toMatch(/<input id="new-key" class="mono key" type="text" readonly value="tws_/);
    expect(response.body).toContain('&lt;img src=x onerror=alert(1)&gt; &quot;deploy&quot;');
    expect(response.body).not.toContain('<img src=x');
    const list = await get(keysUrl(), people.owner);
    expect(list.body).not.toContain(key);
    expect(list.body).toContain(`<code>${key.slice(0, 8)}…</code>`);
    expect(list.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const script = await h.app.inject({ url: '/assets/copy-key.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.body).toContain('navigator.clipboard');
  });

  it.each([
    ['empty', '', 'Give the key a name, then create it.'],
    ['blank', '    ', 'Give the key a name, then create it.'],
    ['too long', 'x'.repeat(101), 'The name is 101 characters long; shorten it to at most 100.'],
  ])('a name that is %s is refused with a sentence at the field (400)', async (_label, name, sentence) => {
    const response = await post(keysUrl(), people.member, { name });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain(sentence);
    expect(response.body).toContain('aria-invalid="true" autofocus');
  });

  it('a member sees only their own keys, revokes them, and cannot revoke the owner’s by a forged post', async () => {
    await createKey(people.member, 'Member key');
    const memberList = await get(keysUrl(), people.member);
    expect(memberList.statusCode).toBe(200);
    expect(memberList.body).toContain('<th scope="row">Member key</th>');
    expect(memberList.body).not.toContain('Default key');
    const [memberKeyId] = listedIds(memberList.body);

    const ownerIds = listedIds((await get(keysUrl(), people.owner)).body);
    expect(ownerIds).toContain(memberKeyId);
    const ownersKey = ownerIds.find((id) => !listedIds(memberList.body).includes(id))!;
    const forged = await post(`${keysUrl()}/${ownersKey}/revoke`, people.member, {});
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain('You can revoke only the API keys you created. Ask an owner of this workspace to revoke this one.');
    expect(listedIds((await get(keysUrl(), people.owner)).body)).toContain(ownersKey);

    const revoked = await post(`${keysUrl()}/${memberKeyId}/revoke`, people.member, {});
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe(`${keysUrl()}?notice=revoked`);
    const after = await get(revoked.headers.location as string, people.member);
    expect(after.body).toContain('The key was revoked.');
    expect(listedIds(after.body)).not.toContain(memberKeyId);
    const missing = await post(`${keysUrl()}/00000000-0000-4000-8000-000000000000/revoke`, people.owner, {});
    expect(missing.statusCode).toBe(404);
  });

  it('the owner revokes a member’s key', async () => {
    await createKey(people.member, 'Owner revokes');
    const id = listedIds((await get(keysUrl(), people.member)).body)[0]!;
    expect((await post(`${keysUrl()}/${id}/revoke`, people.owner, {})).statusCode).toBe(303);
    expect(listedIds((await get(keysUrl(), people.owner)).body)).not.toContain(id);
  });

  it('a guest gets the refusal (403) and no data, on every page and post', async () => {
    for (const response of [
      await get(keysUrl(), people.guest),
      await post(keysUrl(), people.guest, { name: 'Guest key' }),
      await get(`/${urlId}/settings`, people.guest),
    ]) {
      expect(response.statusCode).toBe(403);
      expect(response.body).toMatch(/Guests cannot (create or manage API keys|see or change workspace settings)\. Ask an owner/);
      expect(response.body).not.toContain('Default key');
      expect(response.body).not.toContain('tws_');
    }
  });

  it('not a member of the workspace: the same 404 page as a workspace that does not exist', async () => {
    const notMine = await get(`/${otherUrlId}/settings/api-keys`, people.owner);
    const nothing = await get('/no-such-workspace/settings/api-keys', people.owner);
    expect(notMine.statusCode).toBe(404);
    expect(notMine.body).toBe(nothing.body);
    expect((await post(`/${otherUrlId}/settings/api-keys`, people.owner, { name: 'x' })).statusCode).toBe(404);
  });

  it('CSRF: a post from another origin, or without the session’s token, creates nothing (403)', async () => {
    const before = listedIds((await get(keysUrl(), people.owner)).body);
    const crossSite = await post(keysUrl(), people.owner, { name: 'evil' }, 'https://evil.example');
    expect(crossSite.statusCode).toBe(403);
    const noToken = await post(keysUrl(), { ...people.owner, csrf: 'forged' }, { name: 'evil' });
    expect(noToken.statusCode).toBe(403);
    expect(listedIds((await get(keysUrl(), people.owner)).body)).toEqual(before);
  });
});
