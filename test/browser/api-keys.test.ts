/**
 * The API keys of the workspace settings in a real browser (headless chromium), signed in through
 * the stack's OpenID Connect provider: the owner creates a key, the key shown once works against
 * the gateway, the owner revokes it in the page and the very next API request with it is 401; a
 * member sees only their own keys and a forged revoke of the owner's key is refused; a guest gets
 * the refusal page; a cross-site post is refused. Screenshots in test-results/screenshots/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminCli } from '../support/admin.js';
import { launchBrowser, openPage, screenshot, signedInAt } from '../support/browser.js';

const stack = inject('stack');
const webUrl = stack.webUrl;
const user = (role: string) => stack.idp.users.find((candidate) => candidate.role === role)!;

let browser: Browser;
let urlId: string;
const keysPath = () => `/${urlId}/settings/api-keys`;

beforeAll(async () => {
  expect(webUrl, 'the stack runs the web service').toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  const owner = user('owner');
  const created = await adminCli(['workspace', 'create', '--name', `Keys in a browser ${process.pid}`, '--owner-email', owner.email, '--owner-name', owner.name]);
  expect(created.code, JSON.stringify(created.json)).toBe(0);
  const workspace = (created.json as { workspace: { id: string; urlId: string } }).workspace;
  urlId = workspace.urlId;
  for (const person of stack.idp.users.filter((candidate) => candidate.role !== 'owner')) {
    const added = await adminCli(['member', 'add', '--workspace', workspace.id, '--email', person.email, '--name', person.name, '--role', person.role]);
    expect(added.code, JSON.stringify(added.json)).toBe(0);
  }
  browser = await launchBrowser();
});
afterAll(async () => browser?.close());

/** Opens `path` signed out, signs in at the provider as `role` and lands back on it. */
const signedIn = (role: string, path: string) => signedInAt(browser, `${webUrl}${path}`, user(role));

const workspaceWith = (key: string) => fetch(`${stack.gatewayUrl}/v1/workspace`, { headers: { 'x-api-key': key } });
/** The key ids of the revoke forms on the page. */
const listedIds = async (page: Page) =>
  (await page.locator('form[action*="/revoke"]').evaluateAll((forms) => forms.map((form) => form.getAttribute('action') ?? ''))).map(
    (action) => /api-keys\/([^/]+)\/revoke/.exec(action)?.[1] ?? '',
  );

let ownersKeyId: string;

describe('API keys in the workspace settings', () => {
  it('the owner creates a key, uses it against the API, revokes it in the page: the very next request is 401', async () => {
    const { page, context } = await ownerSession();
    await page.goto(`${webUrl}/${urlId}/settings`);
    await screenshot(page, 'web-settings-index-owner');
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(`${webUrl}${keysPath()}`);
    expect(await page.getByRole('heading', { name: /API keys/ }).first().isVisible()).toBe(true);
    ownersKeyId = (await listedIds(page))[0]!;
    await screenshot(page, 'web-api-keys-owner');

    await page.getByLabel('Name', { exact: true }).fill('Browser <deploy> key');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForURL(`${webUrl}${keysPath()}`);
    const input = page.locator('#new-key');
    expect(await input.getAttribute('readonly')).not.toBeNull();
    const key = await input.inputValue();
    expect(key).toMatch(/^tws_[0-9A-Za-z]{40}$/);
    expect(await page.getByText('Your new API key “Browser <deploy> key”').isVisible()).toBe(true);
    // The copy button (the one script) works: the key lands on the clipboard.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: webUrl });
    await page.getByRole('button', { name: 'Copy key' }).click();
    await expect.poll(() => page.locator('#copy-status').textContent()).toContain('Copied.');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);
    await screenshot(page, 'web-api-key-created');

    expect((await workspaceWith(key)).status).toBe(200);

    await page.getByRole('link', { name: 'Done: back to the API keys' }).click();
    await page.waitForURL(`${webUrl}${keysPath()}`);
    expect(await page.content()).not.toContain(key);
    const revoke = page.getByRole('button', { name: `Revoke the key Browser <deploy> key (${key.slice(0, 8)}…)` });
    await revoke.click();
    await page.waitForURL(`${webUrl}${keysPath()}?notice=revoked`);
    expect(await page.getByText('The key was revoked.').isVisible()).toBe(true);
    // The page answered after every gateway dropped the key: the very next request is refused.
    expect((await workspaceWith(key)).status).toBe(401);
    await screenshot(page, 'web-api-key-revoked');
  });

  it('at a phone’s width the list holds in one column', async () => {
    const { page } = await ownerSession();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${webUrl}${keysPath()}`);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'web-api-keys-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('a member sees only their own keys and cannot revoke the owner’s (a forged post is refused)', async () => {
    const { page, close } = await signedIn('member', keysPath());
    await page.getByLabel('Name', { exact: true }).fill('Member key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.locator('#new-key').inputValue();
    await page.goto(`${webUrl}${keysPath()}`);
    expect(await page.getByRole('heading', { name: 'Your keys' }).isVisible()).toBe(true);
    expect(await page.getByRole('rowheader', { name: 'Member key' }).isVisible()).toBe(true);
    expect(await page.getByText('Default key').count()).toBe(0);
    expect(await listedIds(page)).not.toContain(ownersKeyId);
    await screenshot(page, 'web-api-keys-member');

    // A forged revoke of the owner's key, with the member's own valid token, from the app's origin.
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url().endsWith(`/${ownersKeyId}/revoke`)),
      // (A string: the test project has no DOM typings.) The member's own revoke form, aimed at the owner's key.
      page.evaluate(`(() => {
        const form = document.querySelector('form[action*="/revoke"]');
        form.action = ${JSON.stringify(`${keysPath()}/${ownersKeyId}/revoke`)};
        form.submit();
      })()`),
    ]);
    expect(response.status()).toBe(403);
    await page.getByText('You can revoke only the API keys you created').waitFor();
    await screenshot(page, 'web-api-keys-member-refused');
    expect((await workspaceWith(key)).status).toBe(200);
    await close();
  });

  it('a guest gets the refusal page (403) and no data', async () => {
    const opened = await openPage(browser, `${webUrl}${keysPath()}`);
    const { page } = opened;
    await page.getByRole('link', { name: 'Sign in with your organisation' }).click();
    await page.locator('#email').fill(user('guest').email);
    await page.locator('#password').fill(user('guest').password);
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url() === `${webUrl}${keysPath()}`),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(response.status()).toBe(403);
    expect(await page.getByText('Guests cannot create or manage API keys. Ask an owner').isVisible()).toBe(true);
    expect(await page.locator('table').count()).toBe(0);
    expect(await page.locator('#key-name').count()).toBe(0);
    await screenshot(page, 'web-api-keys-guest');
    await opened.close();
  });

  it('a cross-site post to create a key is refused (403) and creates nothing', async () => {
    const { page, context } = await ownerSession();
    await page.goto(`${webUrl}${keysPath()}`);
    const before = await listedIds(page);
    const attacker = await context.newPage();
    await attacker.goto(`${stack.gatewayUrl}/healthz`);
    await attacker.setContent(
      `<form method="post" action="${webUrl}${keysPath()}"><input name="name" value="stolen"><input name="_csrf" value="guess"><button>Win a prize</button></form>`,
    );
    const [response] = await Promise.all([
      attacker.waitForResponse(`${webUrl}${keysPath()}`),
      attacker.getByRole('button', { name: 'Win a prize' }).click(),
    ]);
    expect(response.status()).toBe(403);
    expect(await attacker.getByText('This form was sent from another site').isVisible()).toBe(true);
    await page.reload();
    expect(await listedIds(page)).toEqual(before);
    await attacker.close();
  });
});

/** The owner signs in once for the whole file, and the later tests reuse that session. */
let owner: { page: Page; close(): Promise<void> } | undefined;
async function ownerSession() {
  owner ??= await signedIn('owner', `/${urlId}/settings`);
  return { page: owner.page, context: owner.page.context() };
}
afterAll(async () => owner?.close());
