/**
 * Settings › Members in a real browser (headless chromium), signed in through the stack's OpenID
 * Connect provider, in a workspace of its own: the owner adds guest@ as a guest, makes them a member,
 * removes member@; member@'s browser session, signed in before the removal, gets the 404 on its
 * next page of that workspace. A member sees the list without the forms; the last owner cannot
 * remove themselves; the page holds at a phone's width. Screenshots in test-results/screenshots/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminCli } from '../support/admin.js';
import { fitsWidth, launchBrowser, screenshot, signedInAt } from '../support/browser.js';

const stack = inject('stack');
const webUrl = stack.webUrl;
const user = (role: string) => stack.idp.users.find((candidate) => candidate.role === role)!;

let browser: Browser;
let urlId: string;
const membersPath = () => `/${urlId}/settings/members`;
const sessions: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  expect(webUrl, 'the stack runs the web service').toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  const owner = user('owner');
  const member = user('member');
  const created = await adminCli(['workspace', 'create', '--name', `Members in a browser ${process.pid}`, '--owner-email', owner.email, '--owner-name', owner.name]);
  expect(created.code, JSON.stringify(created.json)).toBe(0);
  const workspace = (created.json as { workspace: { id: string; urlId: string } }).workspace;
  urlId = workspace.urlId;
  const added = await adminCli(['member', 'add', '--workspace', workspace.id, '--email', member.email, '--name', member.name, '--role', 'member']);
  expect(added.code, JSON.stringify(added.json)).toBe(0);
  // member@ keeps another workspace, so after the removal they stay signed in and meet the 404.
  const elsewhere = await adminCli(['workspace', 'create', '--name', `Members elsewhere ${process.pid}`, '--owner-email', member.email, '--owner-name', member.name]);
  expect(elsewhere.code, JSON.stringify(elsewhere.json)).toBe(0);
  browser = await launchBrowser();
});
afterAll(async () => {
  for (const session of sessions) await session.close();
  await browser?.close();
});

/** Opens `path` signed out, signs in at the provider as `role` and lands back on it. */
async function signedIn(role: string, path: string, options: { width?: number; height?: number } = {}): Promise<Page> {
  const opened = await signedInAt(browser, `${webUrl}${path}`, user(role), options);
  sessions.push(opened);
  return opened.page;
}

const row = (page: Page, email: string) => page.locator('tbody tr', { has: page.getByRole('cell', { name: email, exact: true }) });

describe('Members in the workspace settings', () => {
  let memberPage: Page;
  let ownerPage: Page;

  it('a member sees the list (name, email, role, joined) without the forms', async () => {
    memberPage = await signedIn('member', membersPath());
    expect(await memberPage.getByRole('heading', { name: /Members/ }).first().isVisible()).toBe(true);
    expect(await row(memberPage, user('owner').email).getByRole('cell', { name: 'Owner', exact: true }).isVisible()).toBe(true);
    expect(await row(memberPage, user('member').email).locator('time').count()).toBe(1);
    expect(await memberPage.locator('form[action*="/settings/members"]').count()).toBe(0);
    expect(await memberPage.getByText('Only owners can add, change or remove members').isVisible()).toBe(true);
    await screenshot(memberPage, 'web-members-member');
  });

  it('the settings index links to the members', async () => {
    ownerPage = await signedIn('owner', `/${urlId}/settings`);
    await ownerPage.getByRole('link', { name: 'Members' }).click();
    await ownerPage.waitForURL(`${webUrl}${membersPath()}`);
    await screenshot(ownerPage, 'web-members-owner');
  });

  it('the owner adds guest@ as a guest, then makes them a member', async () => {
    const guest = user('guest').email;
    await ownerPage.getByLabel('Email address').fill(guest.toUpperCase());
    await ownerPage.getByLabel('Role', { exact: true }).selectOption('guest');
    await ownerPage.getByRole('button', { name: 'Add member' }).click();
    await ownerPage.waitForURL(`${webUrl}${membersPath()}?notice=added`);
    expect(await ownerPage.getByText('The member was added.').isVisible()).toBe(true);
    const guestRow = row(ownerPage, guest);
    expect(await guestRow.locator('select').inputValue()).toBe('guest');
    await screenshot(ownerPage, 'web-members-added');

    // Adding them again: the sentence at the field, the address kept.
    await ownerPage.getByLabel('Email address').fill(guest);
    const [again] = await Promise.all([ownerPage.waitForResponse(`${webUrl}${membersPath()}`), ownerPage.getByRole('button', { name: 'Add member' }).click()]);
    expect(again.status()).toBe(409);
    expect(await ownerPage.locator('#member-email-error').textContent()).toContain('is already a member of this workspace');
    expect(await ownerPage.getByLabel('Email address').getAttribute('aria-invalid')).toBe('true');
    await screenshot(ownerPage, 'web-members-add-refused');

    await ownerPage.goto(`${webUrl}${membersPath()}`);
    await row(ownerPage, guest).locator('select').selectOption('member');
    await row(ownerPage, guest).getByRole('button', { name: /Change the role of/ }).click();
    await ownerPage.waitForURL(`${webUrl}${membersPath()}?notice=changed`);
    expect(await row(ownerPage, guest).locator('select').inputValue()).toBe('member');
  });

  it('the owner removes member@: member@’s session, signed in before, gets the 404 on its next page there', async () => {
    const member = user('member');
    await row(ownerPage, member.email).getByRole('button', { name: `Remove ${member.name} (${member.email}) from the workspace` }).click();
    await ownerPage.waitForURL(`${webUrl}${membersPath()}?notice=removed`);
    expect(await ownerPage.getByText('The member was removed.').isVisible()).toBe(true);
    expect(await row(ownerPage, member.email).count()).toBe(0);
    await screenshot(ownerPage, 'web-members-removed');

    const response = await memberPage.reload();
    expect(response?.status()).toBe(404);
    expect(await memberPage.getByText('There is no page at this address').isVisible()).toBe(true);
    const settings = await memberPage.goto(`${webUrl}/${urlId}/settings`);
    expect(settings?.status()).toBe(404);
    await screenshot(memberPage, 'web-members-removed-member-refused');
  });

  it('the last owner cannot remove themselves: a page that says what to do', async () => {
    const owner = user('owner');
    await ownerPage.goto(`${webUrl}${membersPath()}`);
    const [response] = await Promise.all([
      ownerPage.waitForResponse((candidate) => candidate.url().endsWith('/remove')),
      row(ownerPage, owner.email).getByRole('button', { name: /^Remove / }).click(),
    ]);
    expect(response.status()).toBe(409);
    expect(await ownerPage.getByText('Make another member an owner first').isVisible()).toBe(true);
    await screenshot(ownerPage, 'web-members-last-owner');
  });

  it('at a phone’s width the members page holds in one column', async () => {
    const phone = await signedIn('owner', membersPath(), { width: 390, height: 844 });
    expect(await fitsWidth(phone)).toBe(true);
    await screenshot(phone, 'web-members-phone');
  });
});
