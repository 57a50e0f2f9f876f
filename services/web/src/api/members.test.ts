import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminClient, asPeople, type SignedIn, signIn, startWeb, uniqueEmail, type WebHarness } from '../testing/harness.js';

/**
 * The members pages with real sessions, the real tasks service (SettingsService) and its Postgres:
 * owners add, change and remove; members see the list only and their forged posts are refused;
 * guests get the refusal and no data; a non-member gets the 404; bad input is a sentence at the
 * field; a removed person's next page in the workspace is the 404. (The browser test does it
 * through the real provider, with screenshots.)
 */
const stack = inject('stack');
let h: WebHarness;
const admin = adminClient(stack);
const emails = { owner: uniqueEmail('mem-owner'), member: uniqueEmail('mem-member'), guest: uniqueEmail('mem-guest') };
let people: Record<keyof typeof emails, SignedIn>;
let urlId: string;
let otherUrlId: string;

beforeAll(async () => {
  h = await startWeb(stack);
  const workspace = await admin.createWorkspace(`Members page ${process.pid}`, emails.owner);
  urlId = workspace.urlId;
  await admin.addMember(workspace.id, emails.member, 'ROLE_MEMBER');
  await admin.addMember(workspace.id, emails.guest, 'ROLE_GUEST');
  otherUrlId = (await admin.createWorkspace(`Members elsewhere ${process.pid}`, uniqueEmail('mem-other'))).urlId;
  // The member keeps a workspace after their removal below (else they would be signed out).
  await admin.createWorkspace(`Members member's own ${process.pid}`, emails.member);
  people = { owner: await signIn(h, emails.owner), member: await signIn(h, emails.member), guest: await signIn(h, emails.guest) };
});
afterAll(async () => {
  admin.close();
  await h.close();
});

const { get, post } = asPeople(() => h);
const membersUrl = () => `/${urlId}/settings/members`;
/** The user id of the row with this email (from its remove form). */
const userIdOf = (body: string, email: string) => new RegExp(`${email.replace(/[.]/g, '\\.')}</td>[\\s\\S]*?/members/([0-9a-f-]{36})/role`).exec(body)?.[1];

describe('members pages', () => {
  it('the settings index links to the members; the owner gets the list and the forms, with the CSRF token', async () => {
    const index = await get(`/${urlId}/settings`, people.owner);
    expect(index.body).toContain(`<a href="/${urlId}/settings/members">Members</a>`);
    const page = await get(membersUrl(), people.owner);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<td data-label="Email">${emails.member}</td>`);
    expect(page.body).toContain('<label for="member-email">Email address</label>');
    expect(page.body).toContain(`name="_csrf" value="${people.owner.csrf}"`);
    expect(page.body).not.toContain('<script');
  });

  it('a member sees the list only, and their forged posts are refused (403, nothing changes)', async () => {
    const page = await get(membersUrl(), people.member);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<td data-label="Email">${emails.owner}</td>`);
    expect(page.body).not.toContain('id="member-email"');
    const ownerId = userIdOf((await get(membersUrl(), people.owner)).body, emails.owner)!;
    for (const response of [
      await post(membersUrl(), people.member, { email: uniqueEmail('forged'), role: 'owner' }),
      await post(`${membersUrl()}/${ownerId}/role`, people.member, { role: 'guest' }),
      await post(`${membersUrl()}/${ownerId}/remove`, people.member, {}),
    ]) {
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('Only owners can add, change or remove members. Ask an owner of this workspace');
    }
    expect((await get(membersUrl(), people.owner)).body).toContain('<option value="owner" selected>Owner</option>');
  });

  it('a guest gets the refusal (403) and no data', async () => {
    for (const response of [await get(membersUrl(), people.guest), await post(membersUrl(), people.guest, { email: uniqueEmail('g'), role: 'member' })]) {
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('Guests cannot see or manage the members of a workspace.');
      expect(response.body).not.toContain(emails.owner);
    }
  });

  it('not a member of the workspace: the same 404 page as a workspace that does not exist', async () => {
    const notMine = await get(`/${otherUrlId}/settings/members`, people.owner);
    const nothing = await get('/no-such-workspace/settings/members', people.owner);
    expect(notMine.statusCode).toBe(404);
    expect(notMine.body).toBe(nothing.body);
  });

  it.each([
    ['empty', '', 400, 'Enter the email address of the person to add.'],
    ['not an address', 'nobody', 400, 'Enter a whole email address'],
    ['too long', `${'a'.repeat(320)}@example.com`, 400, 'an email address has at most 320'],
  ])('an address that is %s is refused with a sentence at the field', async (_label, email, status, sentence) => {
    const response = await post(membersUrl(), people.owner, { email, role: 'guest' });
    expect(response.statusCode).toBe(status);
    expect(response.body).toContain(sentence);
    expect(response.body).toContain('aria-invalid="true" autofocus');
    expect(response.body).toContain('<option value="guest" selected>Guest</option>');
  });

  it('a role that is not one of the three is refused (400); CSRF: a cross-site post adds nobody (403)', async () => {
    expect((await post(membersUrl(), people.owner, { email: uniqueEmail('r'), role: 'admin' })).statusCode).toBe(400);
    const email = uniqueEmail('csrf');
    expect((await post(membersUrl(), people.owner, { email, role: 'member' }, 'https://evil.example')).statusCode).toBe(403);
    expect((await get(membersUrl(), people.owner)).body).not.toContain(email);
  });

  it('the owner adds, changes and removes; the removed person’s next page there is the 404', async () => {
    const email = uniqueEmail('new');
    const added = await post(membersUrl(), people.owner, { email, role: 'guest' });
    expect(added.statusCode).toBe(303);
    expect(added.headers.location).toBe(`${membersUrl()}?notice=added`);
    const again = await post(membersUrl(), people.owner, { email, role: 'member' });
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain(`${email} is already a member of this workspace.`);
    const id = userIdOf((await get(membersUrl(), people.owner)).body, email)!;
    expect((await post(`${membersUrl()}/${id}/role`, people.owner, { role: 'member' })).headers.location).toBe(`${membersUrl()}?notice=changed`);

    const memberId = userIdOf((await get(membersUrl(), people.owner)).body, emails.member)!;
    const removed = await post(`${membersUrl()}/${memberId}/remove`, people.owner, {});
    expect(removed.statusCode).toBe(303);
    expect((await get(removed.headers.location as string, people.owner)).body).toContain('The member was removed.');
    expect((await get(membersUrl(), people.member)).statusCode).toBe(404);
  });

  it('the last owner can neither leave nor become a member (409, a sentence that says what to do)', async () => {
    const ownerId = userIdOf((await get(membersUrl(), people.owner)).body, emails.owner)!;
    for (const response of [await post(`${membersUrl()}/${ownerId}/remove`, people.owner, {}), await post(`${membersUrl()}/${ownerId}/role`, people.owner, { role: 'member' })]) {
      expect(response.statusCode).toBe(409);
      expect(response.body).toContain('Make another member an owner first');
    }
  });
});
