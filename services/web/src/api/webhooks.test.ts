import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminClient, appUrl, asPeople, type SignedIn, signIn, startWeb, uniqueEmail, type WebHarness } from '../testing/harness.js';

/**
 * The webhooks pages with real sessions, the real tasks service (memberships) and the real webhooks
 * service (its SSRF checks, the test DNS: any name under the test domain resolves to the
 * allow-listed receiver address). The delivery log with real deliveries is the browser test's.
 */
const stack = inject('stack');
let h: WebHarness;
const admin = adminClient(stack);
const emails = { owner: uniqueEmail('hooks-owner'), member: uniqueEmail('hooks-member'), guest: uniqueEmail('hooks-guest'), other: uniqueEmail('hooks-other') };
let people: Record<keyof typeof emails, SignedIn>;
let urlId: string;
let otherUrlId: string;
const receiverUrl = (name: string) => `https://${name}-${process.pid}.${stack.webhooks.domain}/hook`;

beforeAll(async () => {
  h = await startWeb(stack, { WEBHOOKS_GRPC_TARGET: stack.webhooks.grpcTarget });
  const workspace = await admin.createWorkspace(`Hooks page ${process.pid}`, emails.owner);
  urlId = workspace.urlId;
  await admin.addMember(workspace.id, emails.member, 'ROLE_MEMBER');
  await admin.addMember(workspace.id, emails.guest, 'ROLE_GUEST');
  otherUrlId = (await admin.createWorkspace(`Hooks elsewhere ${process.pid}`, emails.other)).urlId;
  people = { owner: await signIn(h, emails.owner), member: await signIn(h, emails.member), guest: await signIn(h, emails.guest), other: await signIn(h, emails.other) };
});
afterAll(async () => {
  admin.close();
  await h.close();
});

const { get, post } = asPeople(() => h);
const hooksUrl = (id = urlId) => `/${id}/settings/webhooks`;
/** The endpoint ids of the delete forms on a list page, in order. */
const listedIds = (body: string) => [...body.matchAll(/\/webhooks\/([0-9a-f-]{36})\/delete/g)].map((match) => match[1]!);

describe('webhooks pages', () => {
  it('the settings index links to the webhooks; a member adds one (303 + notice); the list shows URL and events, never the secret', async () => {
    const index = await get(`/${urlId}/settings`, people.member);
    expect(index.body).toContain(`<a href="/${urlId}/settings/webhooks">Webhooks</a>`);
    const created = await post(hooksUrl(), people.member, { url: receiverUrl('a'), secret: 'sekret-value-1', events: ['task.completed', 'task.created'] });
    expect(created.statusCode, created.body).toBe(303);
    expect(created.headers.location).toBe(`${hooksUrl()}?notice=created`);
    const list = await get(`${hooksUrl()}?notice=created`, people.owner);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('The webhook was added.');
    expect(list.body).toContain(receiverUrl('a'));
    expect(list.body).toContain('<td data-label="Events">task.created, task.completed</td>');
    expect(list.body).not.toContain('sekret-value-1');
    expect(list.headers['content-security-policy']).toContain("script-src 'none'");
  });

  it('refusals of the webhooks service come back at the field with the URL kept and the secret not echoed (400)', async () => {
    for (const [url, sentence] of [
      ['https://127.0.0.1/x', 'private network'],
      ['https://192.168.1.1/x', 'private network'],
      ['http://example.com/x', 'starts with https://'],
      ['not a url', 'not a web address'],
    ]) {
      const refused = await post(hooksUrl(), people.owner, { url: url!, secret: 'never-echoed', events: 'task.updated' });
      expect(refused.statusCode, url).toBe(400);
      expect(refused.body).toMatch(new RegExp(`<p class="error" id="webhook-url-error">[^<]*${sentence}`));
      expect(refused.body).toContain(`value="${url!}"`);
      expect(refused.body).toContain('value="task.updated" checked>');
      expect(refused.body).not.toContain('never-echoed');
    }
    const noSecret = await post(hooksUrl(), people.owner, { url: receiverUrl('b'), secret: '' });
    expect(noSecret.statusCode).toBe(400);
    expect(noSecret.body).toContain('<p class="error" id="webhook-secret-error">Enter a secret');
    const longSecret = await post(hooksUrl(), people.owner, { url: receiverUrl('b'), secret: 's'.repeat(1025) });
    expect(longSecret.statusCode).toBe(400);
    expect(longSecret.body).not.toContain('s'.repeat(1025));
    expect(listedIds((await get(hooksUrl(), people.owner)).body)).toHaveLength(1);
  });

  it('the delivery log of a new webhook is empty; a bad page token is a 400 page; unknown or foreign ids are the 404 page', async () => {
    const [id] = listedIds((await get(hooksUrl(), people.owner)).body);
    const log = await get(`${hooksUrl()}/${id}`, people.member);
    expect(log.statusCode).toBe(200);
    expect(log.body).toContain('No deliveries yet');
    expect((await get(`${hooksUrl()}/${id}?page=bm9wZQ`, people.member)).statusCode).toBe(400);
    expect((await get(`${hooksUrl()}/not-a-uuid`, people.member)).statusCode).toBe(404);
    // The other workspace's person cannot reach it through their own workspace's address.
    const foreign = await post(`${hooksUrl(otherUrlId)}/${id}/delete`, people.other, {});
    expect(foreign.statusCode).toBe(404);
    expect((await get(`${hooksUrl(otherUrlId)}/${id}`, people.other)).statusCode).toBe(404);
    // Nor through ours: not a member is the same 404 as no such page.
    expect((await get(hooksUrl(), people.other)).statusCode).toBe(404);
    expect(listedIds((await get(hooksUrl(), people.owner)).body)).toEqual([id]);
  });

  it('a guest is refused on every page and post, with no data', async () => {
    const [id] = listedIds((await get(hooksUrl(), people.owner)).body);
    for (const response of [
      await get(hooksUrl(), people.guest),
      await get(`${hooksUrl()}/${id}`, people.guest),
      await post(hooksUrl(), people.guest, { url: receiverUrl('g'), secret: 's' }),
      await post(`${hooksUrl()}/${id}/delete`, people.guest, {}),
    ]) {
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('Guests cannot see or manage the webhooks of a workspace.');
      expect(response.body).not.toContain(receiverUrl('a'));
    }
    expect(listedIds((await get(hooksUrl(), people.owner)).body)).toEqual([id]);
  });

  it('CSRF: a foreign origin or a missing token is refused and changes nothing; the owner deletes (303 + notice)', async () => {
    const [id] = listedIds((await get(hooksUrl(), people.owner)).body);
    expect((await post(hooksUrl(), people.owner, { url: receiverUrl('c'), secret: 's' }, 'https://evil.example')).statusCode).toBe(403);
    const noToken = await h.app.inject({
      method: 'POST',
      url: `${hooksUrl()}/${id}/delete`,
      headers: { cookie: people.owner.cookie, origin: appUrl, 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expect(noToken.statusCode).toBe(403);
    expect(listedIds((await get(hooksUrl(), people.owner)).body)).toEqual([id]);
    const deleted = await post(`${hooksUrl()}/${id}/delete`, people.owner, {});
    expect(deleted.statusCode).toBe(303);
    expect(deleted.headers.location).toBe(`${hooksUrl()}?notice=deleted`);
    expect(listedIds((await get(hooksUrl(), people.owner)).body)).toEqual([]);
    expect((await get(`${hooksUrl()}/${id}`, people.owner)).statusCode).toBe(404);
  });
});
