/**
 * The people-facing app (services/web) in a real browser: headless chromium signs in through the
 * stack's OpenID Connect provider (oidc-provider, packages/devstack/src/idp) as the owner, a member
 * and a guest of a workspace whose people have the provider's emails. Screenshots of each page are
 * kept in test-results/screenshots/ (test/support/browser.ts).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminCli } from '../support/admin.js';
import { launchBrowser, screenshot } from '../support/browser.js';

const stack = inject('stack');
const webUrl = stack.webUrl;
const idp = stack.idp;
const workspaceName = 'Browser Demo Workspace';

let browser: Browser;
beforeAll(async () => {
  expect(webUrl, 'the stack runs the web service').toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  // The provider's three people are the owner, a member and a guest of one workspace.
  const owner = idp.users.find((user) => user.role === 'owner')!;
  const created = await adminCli(['workspace', 'create', '--name', workspaceName, '--plan', 'pro', '--owner-email', owner.email, '--owner-name', owner.name]);
  expect(created.code, JSON.stringify(created.json)).toBe(0);
  const workspaceId = (created.json as { workspace: { id: string } }).workspace.id;
  for (const user of idp.users.filter((candidate) => candidate.role !== 'owner')) {
    const added = await adminCli(['member', 'add', '--workspace', workspaceId, '--email', user.email, '--name', user.name, '--role', user.role]);
    expect(added.code, JSON.stringify(added.json)).toBe(0);
  }
  browser = await launchBrowser();
});
afterAll(async () => browser?.close());

async function signInAtProvider(page: Page, user: { email: string; password: string }): Promise<void> {
  // The local provider's login page (packages/devstack/src/idp/pages.ts); consent is implicit for the app.
  await page.locator('#email').fill(user.email);
  await page.locator('#password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe('sign-in through the local identity provider', () => {
  it.each(idp.users.map((user) => [user.role, user] as const))('%s signs in, sees the demo workspace, switches, signs out', async (role, user) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${webUrl}/`);
    await screenshot(page, 'web-landing');
    await page.getByRole('link', { name: 'Sign in with your organisation' }).click();
    await signInAtProvider(page, user);
    await page.waitForURL(`${webUrl}/workspaces`);
    expect(await page.getByRole('heading', { name: 'Your workspaces' }).isVisible()).toBe(true);
    expect(await page.getByText(`Signed in as ${user.email.toLowerCase()}`).isVisible()).toBe(true);
    expect(await page.getByText(`Your role: ${role[0]!.toUpperCase()}${role.slice(1)}`).first().isVisible()).toBe(true);
    await screenshot(page, `web-workspaces-${role}`);

    // The session cookie: HttpOnly, SameSite=Lax, Path=/ (http on loopback: no Secure, no __Host-).
    const [cookie] = (await context.cookies(webUrl)).filter((candidate) => candidate.name === 'tws_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });

    // The switcher: a workspace's settings (owners and members; a guest is refused).
    await page.getByRole('link', { name: new RegExp(workspaceName) }).first().click();
    await page.waitForURL(/\/settings$/);
    if (role === 'guest') expect(await page.getByText('Guests cannot see or change workspace settings').isVisible()).toBe(true);
    else expect(await page.getByRole('link', { name: 'API keys' }).isVisible()).toBe(true);
    await screenshot(page, `web-settings-${role}`);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${webUrl}/?notice=signed-out`);
    expect(await page.getByText('You are signed out.').isVisible()).toBe(true);
    // Signing out removed the cookie: the next visit is a signed-out one, sent to sign in first.
    expect((await context.cookies(webUrl)).some((candidate) => candidate.name === 'tws_session')).toBe(false);
    await page.goto(`${webUrl}/workspaces`);
    expect(page.url()).toBe(`${webUrl}/?returnTo=%2Fworkspaces`);
    await context.close();
  });

  it('a signed-out deep link: sign in, then land on it', async () => {
    const owner = idp.users.find((user) => user.role === 'owner')!;
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${webUrl}/workspaces`);
    expect(page.url()).toBe(`${webUrl}/?returnTo=%2Fworkspaces`);
    await page.getByRole('link', { name: 'Sign in with your organisation' }).click();
    await signInAtProvider(page, owner);
    await page.waitForURL(`${webUrl}/workspaces`);
    const settings = await page.getByRole('link', { name: new RegExp(workspaceName) }).first().getAttribute('href');
    await context.clearCookies();
    await page.goto(`${webUrl}${settings}`);
    await page.getByRole('link', { name: 'Sign in with your organisation' }).click();
    await signInAtProvider(page, owner);
    await page.waitForURL(`${webUrl}${settings}`);
    await context.close();
  });

  it('CSRF: a cross-site form post is refused (403) and the session lives on', async () => {
    const owner = idp.users.find((user) => user.role === 'owner')!;
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${webUrl}/auth/sign-in`);
    await signInAtProvider(page, owner);
    await page.waitForURL(`${webUrl}/workspaces`);
    // Another origin (the gateway's) posts a form to the app's sign-out. 127.0.0.1 on another port
    // is the same *site* (ports do not count for SameSite), so the cookie IS sent: the Origin check
    // and the token refuse it.
    const attacker = await context.newPage();
    await attacker.goto(`${stack.gatewayUrl}/healthz`);
    await attacker.setContent(
      `<form method="post" action="${webUrl}/auth/sign-out"><input name="_csrf" value="guess"><button>Win a prize</button></form>`,
    );
    const [response] = await Promise.all([
      attacker.waitForResponse(`${webUrl}/auth/sign-out`),
      attacker.getByRole('button', { name: 'Win a prize' }).click(),
    ]);
    expect(response.status()).toBe(403);
    expect(await attacker.getByText('This form was sent from another site or has expired').isVisible()).toBe(true);
    await screenshot(attacker, 'web-csrf-refused');
    await page.goto(`${webUrl}/workspaces`);
    expect(await page.getByRole('heading', { name: 'Your workspaces' }).isVisible()).toBe(true);
    await context.close();
  });
});
