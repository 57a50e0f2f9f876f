/**
 * The task page `{app_url}/{urlId}/task/{taskPrefix}-{number}` in a real browser (headless
 * chromium), signed in through the stack's OpenID Connect provider. A task made through the API
 * (rich description, assignee, a comment with an API key, an attachment uploaded in three steps)
 * is opened signed out: sign in, land on the task; its facts, description, comment and attachment
 * are shown; a comment added in the page is attributed to the person; the attachment link gives
 * the bytes; no task, another workspace's task, a malformed reference and a workspace the person
 * is not a member of are the same 404 page; a guest reads and comments; a phone width holds.
 * Screenshots in test-results/screenshots/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminCli } from '../support/admin.js';
import { api } from '../support/api.js';
import { fitsWidth, launchBrowser, screenshot, signedInAt } from '../support/browser.js';

const stack = inject('stack');
const webUrl = stack.webUrl;
const user = (role: string) => stack.idp.users.find((candidate) => candidate.role === role)!;

interface Made {
  urlId: string;
  key: string;
  keyName: string;
  ref: string;
  taskId: string;
  attachmentUrl: string;
}

const description = `# Goal

Ship the **task page** with *care* and ~~haste~~, see \`rich-text.ts\` and https://example.com/docs.

## Steps

- render headings
- render lists

1. first
2. second

> a quote <script>alert(1)</script>`;

const fileBytes = Buffer.from('hello from the task page test\n'.repeat(20));

async function createWorkspace(name: string, ownerEmail?: string, ownerName?: string) {
  const args = ['workspace', 'create', '--name', name];
  if (ownerEmail && ownerName) args.push('--owner-email', ownerEmail, '--owner-name', ownerName);
  const created = await adminCli(args);
  expect(created.code, JSON.stringify(created.json)).toBe(0);
  return created.json as { workspace: { id: string; urlId: string }; owner: { userId: string }; apiKey: { name: string; key: string } };
}

/** A project named "Launch Page" (prefix LP…) with one task, made through the API with `key`. */
async function makeTask(key: string, assigneeId?: string) {
  const credentials = { apiKey: key };
  const project = await api<{ id: string; defaultListId: string }>('POST', '/v1/projects', { credentials, body: { name: 'Launch Page' } });
  expect(project.status, project.text).toBe(201);
  const projects = await api<Array<{ id: string; taskPrefix: string }>>('GET', '/v1/projects', { credentials });
  const prefix = projects.body.find((candidate) => candidate.id === project.body.id)!.taskPrefix;
  const task = await api<{ id: string; number: number }>('POST', '/v1/tasks', {
    credentials,
    body: { projectId: project.body.id, listId: project.body.defaultListId, name: 'Write the <b>task</b> page', ...(assigneeId ? { assigneeId } : {}) },
  });
  expect(task.status, task.text).toBe(201);
  return { taskId: task.body.id, ref: `${prefix}-${task.body.number}` };
}

let browser: Browser;
let made: Made;
let other: { urlId: string; ref: string };
let strangerUrlId: string;

beforeAll(async () => {
  expect(webUrl, 'the stack runs the web service').toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  const owner = user('owner');
  const created = await createWorkspace(`Task page ${process.pid}`, owner.email, owner.name);
  for (const person of stack.idp.users.filter((candidate) => candidate.role !== 'owner')) {
    const added = await adminCli(['member', 'add', '--workspace', created.workspace.id, '--email', person.email, '--name', person.name, '--role', person.role]);
    expect(added.code, JSON.stringify(added.json)).toBe(0);
  }
  const key = created.apiKey.key;
  const credentials = { apiKey: key };
  const { taskId, ref } = await makeTask(key, created.owner.userId);
  const patched = await api('PATCH', `/v1/tasks/${taskId}`, { credentials, body: { description } });
  expect(patched.status, patched.text).toBe(200);
  const comment = await api('POST', `/v1/tasks/${taskId}/comments`, { credentials, body: { text: 'From the **API** key\n\n- one item' } });
  expect(comment.status, comment.text).toBe(201);
  // The attachment, in three steps: an upload URL, the bytes, the registration.
  const upload = await api<{ uploadUrl: string; attachmentId: string }>('POST', '/v1/attachments/upload', {
    credentials,
    body: { contentType: 'text/plain', size: fileBytes.length },
  });
  expect(upload.status, upload.text).toBe(200);
  const put = await fetch(upload.body.uploadUrl, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: new Uint8Array(fileBytes) });
  expect(put.status).toBe(200);
  const registered = await api<{ id: string; url: string }>('POST', `/v1/tasks/${taskId}/attachments`, {
    credentials,
    body: { attachmentId: upload.body.attachmentId, name: 'notes <1>.txt', contentType: 'text/plain', size: fileBytes.length },
  });
  expect(registered.status, registered.text).toBe(201);
  made = { urlId: created.workspace.urlId, key, keyName: created.apiKey.name, ref, taskId, attachmentUrl: registered.body.url };

  // Another workspace (none of the local provider's people belong to it) with a task of the same reference.
  const elsewhere = await createWorkspace(`Task page elsewhere ${process.pid}`);
  other = { urlId: elsewhere.workspace.urlId, ref: (await makeTask(elsewhere.apiKey.key)).ref };
  strangerUrlId = elsewhere.workspace.urlId;
  browser = await launchBrowser();
});
afterAll(async () => browser?.close());

const taskPath = () => `/${made.urlId}/task/${made.ref}`;

/** Opens `path` signed out, signs in at the provider as `role` and lands back on it. */
const signedIn = (role: string, path: string, width?: number) => signedInAt(browser, `${webUrl}${path}`, user(role), width ? { width, height: 844 } : {});

let owner: { page: Page; close(): Promise<void> } | undefined;
afterAll(async () => owner?.close());

describe('the task page', () => {
  it('opened signed out: sign in through the provider, land on the task; name, facts, description, labels, comment and attachment are shown', async () => {
    owner = await signedIn('owner', taskPath());
    const { page } = owner;
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Write the <b>task</b> page');
    expect(await page.locator('h1 b').count()).toBe(0);
    const facts = page.locator('dl.facts');
    expect(await facts.textContent()).toMatch(/Status\s*To Do/);
    expect(await facts.textContent()).toMatch(/Completion\s*Not completed/);
    expect(await facts.textContent()).toMatch(/Assignee\s*\S/);
    expect(await facts.textContent()).toMatch(/Section\s*To Do/);
    // The description from its rich text.
    const rich = page.locator('section[aria-labelledby="description-title"] .rich');
    expect(await rich.locator('h3').textContent()).toBe('Goal');
    expect(await rich.locator('h4').textContent()).toBe('Steps');
    expect(await rich.locator('ul > li').allTextContents()).toEqual(['render headings', 'render lists']);
    expect(await rich.locator('ol > li').allTextContents()).toEqual(['first', 'second']);
    expect(await rich.locator('strong').textContent()).toBe('task page');
    expect(await rich.locator('em').textContent()).toBe('care');
    expect(await rich.locator('s').textContent()).toBe('haste');
    expect(await rich.locator('code').textContent()).toBe('rich-text.ts');
    expect(await rich.locator('blockquote').textContent()).toContain('a quote <script>alert(1)</script>');
    expect(await rich.locator('script').count()).toBe(0);
    const link = rich.getByRole('link', { name: 'https://example.com/docs' });
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer nofollow');
    // The owner labels tasks: the editor, with no label on the task yet.
    expect(await page.getByText('No labels yet.', { exact: true }).isVisible()).toBe(true);
    // The API key's comment, attributed to the key's name.
    const comments = page.locator('ol.comments > li');
    expect(await comments.count()).toBe(1);
    expect(await comments.first().locator('.meta strong').textContent()).toBe(made.keyName);
    expect(await comments.first().locator('.rich strong').textContent()).toBe('API');
    // The attachment, linked to the permanent download URL the API gave.
    const file = page.getByRole('link', { name: 'notes <1>.txt' });
    expect(await file.getAttribute('href')).toBe(made.attachmentUrl);
    await screenshot(page, 'web-task-page');
  });

  it('the attachment link gives the file’s bytes', async () => {
    const { page } = owner!;
    const href = await page.getByRole('link', { name: 'notes <1>.txt' }).getAttribute('href');
    const download = await fetch(href!);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(fileBytes)).toBe(true);
    // …and followed in the browser (the gateway redirects to the stored object).
    const response = await page.request.get(href!);
    expect(response.status()).toBe(200);
    expect(Buffer.from(await response.body()).equals(fileBytes)).toBe(true);
  });

  it('a comment added in the page is shown, attributed to the signed-in person; an empty one gets the sentence at the field', async () => {
    const { page } = owner!;
    await page.getByLabel('Add a comment').fill('   ');
    const [refused] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url().endsWith(`${taskPath()}/comments`)),
      page.getByRole('button', { name: 'Add comment' }).click(),
    ]);
    expect(refused.status()).toBe(400);
    expect(await page.locator('#comment-text-error').textContent()).toBe('Write a comment first, then add it.');
    expect(await page.locator('#comment-text').getAttribute('aria-invalid')).toBe('true');
    await screenshot(page, 'web-task-page-comment-refused');

    await page.getByLabel('Add a comment').fill('Looks **good** to me\n\n1. ship it');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.waitForURL(`${webUrl}${taskPath()}?notice=comment-added#comments`);
    expect(await page.getByText('Your comment was added.').isVisible()).toBe(true);
    const last = page.locator('ol.comments > li').last();
    expect(await last.locator('.meta strong').textContent()).toBe(user('owner').name);
    expect(await last.locator('.meta').textContent()).toContain('(you)');
    expect(await last.locator('.rich strong').textContent()).toBe('good');
    expect(await last.locator('.rich ol > li').textContent()).toBe('ship it');
    await screenshot(page, 'web-task-page-commented');
  });

  it('no such task, another workspace’s task, a malformed reference and a workspace of others: the same 404 page', async () => {
    const { page } = owner!;
    const [prefix] = made.ref.split('-');
    const paths = [
      `/${made.urlId}/task/${prefix}-99999`,
      `/${other.urlId}/task/${other.ref}`,
      `/${made.urlId}/task/not-a-ref`,
      `/${made.urlId}/task/${prefix}-0`,
      `/${made.urlId}/task/${made.taskId}`,
      `/${strangerUrlId}/task/${made.ref}`,
      `/no-such-workspace/task/${made.ref}`,
    ];
    const bodies: string[] = [];
    for (const path of paths) {
      const response = await page.goto(`${webUrl}${path}`);
      expect(response?.status(), path).toBe(404);
      bodies.push((await page.locator('main').innerHTML()).trim());
    }
    expect(new Set(bodies).size, 'one 404 page for all').toBe(1);
    expect(bodies[0]).toContain('There is no page at this address.');
    await screenshot(page, 'web-task-page-not-found');
  });

  it('the session cookie works outside the browser too: the page answers a plain request, again and again', async () => {
    // Speed is measured by bench/web (`BENCH_ONLY=web npm run bench`), not asserted here.
    const { page } = owner!;
    const cookie = (await page.context().cookies(webUrl)).map((entry) => `${entry.name}=${entry.value}`).join('; ');
    for (let run = 0; run < 3; run++) {
      const response = await fetch(`${webUrl}${taskPath()}`, { headers: { cookie } });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('Write the &lt;b&gt;task&lt;/b&gt; page');
    }
  });

  it('a guest reads the task and comments, attributed to them', async () => {
    const guest = await signedIn('guest', taskPath());
    const { page } = guest;
    // Guests may not label tasks: the labels read-only, no add form.
    expect(await page.getByText('No labels.', { exact: true }).isVisible()).toBe(true);
    expect(await page.locator('#add-label').count()).toBe(0);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Write the <b>task</b> page');
    expect(await page.locator('.rich h3').first().textContent()).toBe('Goal');
    await page.getByLabel('Add a comment').fill('A guest was here');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.waitForURL(`${webUrl}${taskPath()}?notice=comment-added#comments`);
    const last = page.locator('ol.comments > li').last();
    expect(await last.locator('.meta strong').textContent()).toBe(user('guest').name);
    await screenshot(page, 'web-task-page-guest');
    await guest.close();
  });

  it('at a phone’s width the page holds in one column', async () => {
    const phone = await signedIn('member', taskPath(), 390);
    const { page } = phone;
    const overflow = await fitsWidth(page);
    expect(overflow).toBe(true);
    await screenshot(page, 'web-task-page-phone');
    await phone.close();
  });
});
