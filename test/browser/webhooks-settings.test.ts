/**
 * The webhooks of the workspace settings in a real browser (headless chromium), signed in through
 * the stack's OpenID Connect provider, in a workspace of this file's own: a member adds a webhook
 * pointing at a real HTTPS receiver (test CA, test DNS), a task changed through the API is
 * delivered with a valid signature, the delivery and its succeeded attempt appear in the log, a
 * redelivery sends the same event again as a new delivery; a loopback or private URL is refused
 * with the sentence at the field (the URL kept, the secret not echoed); a guest is refused; a form
 * post without the CSRF token is refused; the pages hold at a phone's width. Screenshots in
 * test-results/screenshots/.
 */
import { randomBytes } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminCli, type TestWorkspace } from '../support/admin.js';
import type { Credentials } from '../support/api.js';
import { fitsWidth, launchBrowser, openPage, screenshot, signedInAt } from '../support/browser.js';
import { createProject, createTask, patchTask, type CreatedProject } from '../support/fixtures.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/webhooks/receiver.js';

const stack = inject('stack');
const webUrl = stack.webUrl;
const user = (role: string) => stack.idp.users.find((candidate) => candidate.role === role)!;
const secret = `whsec_${randomBytes(18).toString('base64url')}`;

let browser: Browser;
let receiver: TestReceiver;
let urlId: string;
let key: Credentials;
let project: CreatedProject;
const webhooksPath = () => `/${urlId}/settings/webhooks`;

beforeAll(async () => {
  expect(webUrl, 'the stack runs the web service').toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  const owner = user('owner');
  const created = await adminCli(['workspace', 'create', '--name', `Webhooks in a browser ${process.pid}`, '--owner-email', owner.email, '--owner-name', owner.name]);
  expect(created.code, JSON.stringify(created.json)).toBe(0);
  const workspace = created.json as unknown as TestWorkspace;
  urlId = workspace.workspace.urlId;
  key = { apiKey: workspace.apiKey.key };
  for (const person of stack.idp.users.filter((candidate) => candidate.role !== 'owner')) {
    const added = await adminCli(['member', 'add', '--workspace', workspace.workspace.id, '--email', person.email, '--name', person.name, '--role', person.role]);
    expect(added.code, JSON.stringify(added.json)).toBe(0);
  }
  project = await createProject(key);
  receiver = await startReceiver();
  browser = await launchBrowser();
});
afterAll(async () => {
  await member?.close();
  await browser?.close();
  await receiver?.close();
});

/** Opens `path` signed out, signs in at the provider as `role` and lands back on it. */
const signedIn = (role: string, path: string) => signedInAt(browser, `${webUrl}${path}`, user(role));

/** The member signs in once for the whole file; the later tests reuse that session. */
let member: { page: Page; close(): Promise<void> } | undefined;
async function memberPage(): Promise<Page> {
  member ??= await signedIn('member', webhooksPath());
  return member.page;
}

const deliveryCards = (page: Page): Locator => page.locator('ol.deliveries > li');

/** Reloads the page until `done` holds (bounded: fails after `timeoutMs`). */
async function reloadUntil(page: Page, done: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`the delivery log did not show ${what} within ${timeoutMs} ms:\n${await page.locator('main').innerText()}`);
    await page.waitForTimeout(500);
    await page.reload();
  }
}

async function expectSigned(request: ReceivedRequest): Promise<void> {
  expect(await verify(secret, request.body.toString('utf8'), String(request.headers['x-service-signature']))).toBe(true);
}

async function addWebhook(page: Page, url: string, secretText: string, events: string[] = []): Promise<void> {
  await page.getByLabel('Endpoint URL').fill(url);
  await page.getByLabel('Secret').fill(secretText);
  for (const kind of events) await page.getByLabel(kind).check();
  await page.getByRole('button', { name: 'Add webhook' }).click();
}

let logPath: string;

describe('webhooks in the workspace settings', () => {
  it('a member adds a webhook; a task change is delivered, signed, and shown in the log with its attempt; redeliver sends it again', async () => {
    const page = await memberPage();
    await page.goto(`${webUrl}/${urlId}/settings`);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(`${webUrl}${webhooksPath()}`);
    expect(await page.getByText('This workspace has no webhooks yet.').isVisible()).toBe(true);
    await screenshot(page, 'web-webhooks-empty');

    const url = `${receiver.origin}/hooks/tws`;
    await addWebhook(page, url, secret, ['task.created', 'task.updated']);
    await page.waitForURL(`${webUrl}${webhooksPath()}?notice=created`);
    expect(await page.getByText('The webhook was added.').isVisible()).toBe(true);
    expect(await page.content()).not.toContain(secret);
    const row = page.getByRole('row', { name: new RegExp(url) });
    expect(await row.getByRole('cell').first().innerText()).toBe('task.created, task.updated');
    await screenshot(page, 'web-webhooks-list');

    await page.getByRole('link', { name: `Delivery log of ${url}` }).click();
    await page.waitForURL(/\/settings\/webhooks\/[0-9a-f-]{36}$/);
    logPath = new URL(page.url()).pathname;
    expect(await page.getByText('No deliveries yet').isVisible()).toBe(true);

    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'Hooked' });
    await patchTask(key, task.id, { name: 'Hooked, renamed' });
    const [created, updated] = await receiver.waitFor(2);
    await expectSigned(created!);
    await expectSigned(updated!);
    expect([created!.headers['x-service-event'], updated!.headers['x-service-event']]).toEqual(['task.created', 'task.updated']);

    await reloadUntil(page, async () => (await deliveryCards(page).count()) === 2 && (await page.locator('.state-succeeded').count()) === 2, 'two succeeded deliveries');
    // Newest first: the update, with its event id, and its one attempt (200).
    const newest = deliveryCards(page).first();
    expect(await newest.getByRole('heading').innerText()).toMatch(/^task\.updated\s+Succeeded$/);
    expect(await newest.innerText()).toContain(String(updated!.headers['x-service-delivery']));
    const attempt = newest.locator('table.attempts tbody tr');
    expect(await attempt.count()).toBe(1);
    expect(await attempt.getByRole('rowheader').innerText()).toBe('1');
    expect(await attempt.locator('td[data-label="Outcome"]').innerText()).toBe('Succeeded');
    expect(await attempt.locator('td[data-label="Status code"]').innerText()).toBe('200');
    expect(await attempt.locator('td[data-label="Duration"]').innerText()).toMatch(/^\d+ ms$/);
    expect(await newest.locator('dd').nth(2).innerText()).toBe('None');
    await screenshot(page, 'web-webhook-delivery-log');

    await newest.getByRole('button', { name: /^Send the task\.updated delivery evt_/ }).click();
    await page.waitForURL(`${webUrl}${logPath}?notice=redelivered`);
    expect(await page.getByText('The delivery is being sent again').isVisible()).toBe(true);
    const [, , again] = await receiver.waitFor(3);
    await expectSigned(again!);
    expect(again!.headers['x-service-delivery']).toBe(updated!.headers['x-service-delivery']);
    await reloadUntil(page, async () => (await deliveryCards(page).count()) === 3 && (await page.locator('.state-succeeded').count()) === 3, 'the redelivery, succeeded');
    const redelivery = deliveryCards(page).first();
    expect(await redelivery.innerText()).toContain('Sent again from');
    expect(await redelivery.innerText()).toContain(String(updated!.headers['x-service-delivery']));
    expect(await redelivery.locator('table.attempts td[data-label="Outcome"]').innerText()).toBe('Succeeded');
    await screenshot(page, 'web-webhook-redelivered');
  });

  it('a loopback or private URL is refused with the sentence at the field, the URL kept and the secret not echoed; plain http too', async () => {
    const page = await memberPage();
    await page.goto(`${webUrl}${webhooksPath()}`);
    for (const [url, sentence] of [
      ['https://127.0.0.1/hook', 'This address leads to this machine or a private network'],
      ['https://10.1.2.3/hook', 'This address leads to this machine or a private network'],
      [`http://${new URL(receiver.origin).host}/hook`, 'Use an address that starts with https://'],
    ] as const) {
      const refusedSecret = `do-not-echo-${randomBytes(6).toString('hex')}`;
      const [response] = await Promise.all([
        page.waitForResponse((candidate) => candidate.url() === `${webUrl}${webhooksPath()}` && candidate.request().method() === 'POST'),
        addWebhook(page, url, refusedSecret),
      ]);
      expect(response.status()).toBe(400);
      expect(await page.locator('#webhook-url-error').innerText()).toContain(sentence);
      expect(await page.getByLabel('Endpoint URL').inputValue()).toBe(url);
      expect(await page.getByLabel('Endpoint URL').getAttribute('aria-invalid')).toBe('true');
      expect(await page.getByLabel('Secret').inputValue()).toBe('');
      expect(await response.text()).not.toContain(refusedSecret);
    }
    await screenshot(page, 'web-webhooks-refused-url');
    expect(await page.getByRole('row').count()).toBe(2); // the header and the one webhook
  });

  it('at a phone’s width the list and the delivery log hold in one column', async () => {
    const page = await memberPage();
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [path, name] of [
      [webhooksPath(), 'web-webhooks-phone'],
      [logPath, 'web-webhook-delivery-log-phone'],
    ] as const) {
      await page.goto(`${webUrl}${path}`);
      expect(await fitsWidth(page)).toBe(true);
      await screenshot(page, name);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('a form post without the CSRF token is refused (403) and deletes nothing; with it, the webhook is deleted', async () => {
    const page = await memberPage();
    await page.goto(`${webUrl}${webhooksPath()}`);
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url().endsWith('/delete')),
      // (A string: the test project has no DOM typings.) The page's own delete form, without its token.
      page.evaluate(`(() => {
        const form = document.querySelector('form[action$="/delete"]');
        form.querySelector('input[name="_csrf"]').remove();
        form.submit();
      })()`),
    ]);
    expect(response.status()).toBe(403);
    await page.getByText('This form was sent from another site or has expired').waitFor();
    await page.goto(`${webUrl}${webhooksPath()}`);
    expect(await page.locator('form[action$="/delete"]').count()).toBe(1);

    await page.getByRole('button', { name: /^Delete the webhook https:/ }).click();
    await page.waitForURL(`${webUrl}${webhooksPath()}?notice=deleted`);
    expect(await page.getByText('The webhook was deleted').isVisible()).toBe(true);
    expect(await page.getByText('This workspace has no webhooks yet.').isVisible()).toBe(true);
    await page.goto(`${webUrl}${logPath}`);
    expect(await page.getByRole('heading', { name: 'Webhook not found' }).isVisible()).toBe(true);
  });

  it('a guest gets the refusal page (403) and no data', async () => {
    const opened = await openPage(browser, `${webUrl}${webhooksPath()}`);
    const { page } = opened;
    await page.getByRole('link', { name: 'Sign in with your organisation' }).click();
    await page.locator('#email').fill(user('guest').email);
    await page.locator('#password').fill(user('guest').password);
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url() === `${webUrl}${webhooksPath()}`),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(response.status()).toBe(403);
    expect(await page.getByText('Guests cannot see or manage the webhooks of a workspace. Ask an owner').isVisible()).toBe(true);
    expect(await page.locator('table').count()).toBe(0);
    expect(await page.locator('#webhook-url').count()).toBe(0);
    await screenshot(page, 'web-webhooks-guest');
    await opened.close();
  });
});
