/**
 * The labels of the workspace settings in a real browser (headless chromium), signed in through the
 * stack's OpenID Connect provider: a member creates a label, renames and recolours it, puts it on a
 * task with the task page's form (303 back to the task) and sees it in
 * GET /v1/tasks/:id and in the task.updated event; takes it off; deletes a label; the page holds at
 * a phone's width; a guest gets the refusal page, and the refusal for a forged add-label post.
 * Screenshots in test-results/screenshots/.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminCli } from '../support/admin.js';
import { api } from '../support/api.js';
import { fitsWidth, launchBrowser, openPage, postForm, screenshot, signedInAt } from '../support/browser.js';
import { TaskEventReader } from '../support/task-events.js';

const stack = inject('stack');
const webUrl = stack.webUrl;
const user = (role: string) => stack.idp.users.find((candidate) => candidate.role === role)!;

let browser: Browser;
let events: TaskEventReader;
let urlId: string;
let apiKey: string;
let task: { id: string; number: number; ref: string };
const labelsPath = () => `/${urlId}/settings/labels`;

interface ApiTask {
  labels: Array<{ id: string; name: string; color: string }>;
}

beforeAll(async () => {
  expect(webUrl, 'the stack runs the web service').toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  events = await TaskEventReader.start(stack.kafkaBrokers);
  const owner = user('owner');
  const created = await adminCli(['workspace', 'create', '--name', `Labels in a browser ${process.pid}`, '--owner-email', owner.email, '--owner-name', owner.name]);
  expect(created.code, JSON.stringify(created.json)).toBe(0);
  const result = created.json as { workspace: { id: string; urlId: string }; apiKey: { key: string } };
  urlId = result.workspace.urlId;
  apiKey = result.apiKey.key;
  for (const person of stack.idp.users.filter((candidate) => candidate.role !== 'owner')) {
    const added = await adminCli(['member', 'add', '--workspace', result.workspace.id, '--email', person.email, '--name', person.name, '--role', person.role]);
    expect(added.code, JSON.stringify(added.json)).toBe(0);
  }
  const credentials = { apiKey };
  const project = (await api<{ id: string; defaultListId: string }>('POST', '/v1/projects', { credentials, body: { name: 'Labelled project' } })).body;
  const prefix = (await api<Array<{ id: string; taskPrefix: string }>>('GET', '/v1/projects', { credentials })).body.find((p) => p.id === project.id)!.taskPrefix;
  const made = (await api<{ id: string; number: number }>('POST', '/v1/tasks', { credentials, body: { projectId: project.id, listId: project.defaultListId, name: 'Fix the login page' } })).body;
  task = { ...made, ref: `${prefix}-${made.number}` };
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await events?.stop();
});

/** Opens `path` signed out, signs in at the provider as `role` and lands back on it. */
const signedIn = (role: string, path: string) => signedInAt(browser, `${webUrl}${path}`, user(role));

const taskJson = async () => (await api<ApiTask>('GET', `/v1/tasks/${task.id}`, { credentials: { apiKey } })).body;

describe('labels in the workspace settings', () => {
  it('a member creates, renames and recolours a label, puts it on a task and takes it off: the API and the events show it', async () => {
    const { page, close } = await signedIn('member', `/${urlId}/settings`);
    await page.getByRole('link', { name: 'Labels' }).click();
    await page.waitForURL(`${webUrl}${labelsPath()}`);
    expect(await page.getByText('This workspace has no labels yet.').isVisible()).toBe(true);

    await page.locator('#label-name').fill('Bug <b>');
    await page.locator('#label-color').fill('#fde047');
    await page.getByRole('button', { name: 'Create label' }).click();
    await page.waitForURL(`${webUrl}${labelsPath()}?notice=created`);
    const chip = page.locator('tbody .chip').first();
    expect(await chip.textContent()).toBe('Bug <b>');
    // A light colour: dark text on it.
    expect(await chip.getAttribute('class')).toContain('chip-dark');
    expect(await page.locator('tbody rect').first().getAttribute('fill')).toBe('#FDE047');
    await screenshot(page, 'web-labels-created');

    // A name already taken (in another case) is refused at the field, the page kept.
    await page.locator('#label-name').fill('bug <B>');
    await page.getByRole('button', { name: 'Create label' }).click();
    expect(await page.locator('#label-name-error').textContent()).toContain('already exists');
    expect(await page.locator('#label-name').getAttribute('aria-invalid')).toBe('true');
    await screenshot(page, 'web-labels-name-taken');

    const action = (await page.locator('form[action$="/delete"]').first().getAttribute('action'))!;
    const labelId = /labels\/([^/]+)\/delete/.exec(action)![1]!;
    await page.locator(`#name-${labelId}`).fill('Bug');
    await page.locator(`#color-${labelId}`).fill('#7f1d1d');
    await page.getByRole('button', { name: 'Save the name and colour of Bug <b>' }).click();
    await page.waitForURL(`${webUrl}${labelsPath()}?notice=updated`);
    expect(await page.locator('tbody .chip').first().textContent()).toBe('Bug');
    expect(await page.locator('tbody .chip').first().getAttribute('class')).toContain('chip-light');
    await screenshot(page, 'web-labels-renamed');

    // On the task page: add the label with its form (a 303 back to the task); the API shows it at once.
    const taskPage = `${webUrl}/${urlId}/task/${task.ref}`;
    await page.goto(taskPage);
    expect(await page.getByText('No labels yet.', { exact: true }).isVisible()).toBe(true);
    await page.locator('#add-label').selectOption(labelId);
    await page.getByRole('button', { name: 'Add label' }).click();
    await page.waitForURL(taskPage);
    expect(await page.locator('.task-labels .chip').allTextContents()).toEqual(['Bug']);
    expect((await taskJson()).labels).toEqual([{ id: labelId, name: 'Bug', color: '#7F1D1D' }]);
    const [event] = await events.waitFor(task.id, 1, 0);
    expect(event!.payload.data.labels).toEqual([{ id: labelId, name: 'Bug', color: '#7F1D1D' }]);
    await screenshot(page, 'web-task-page-labelled');

    await page.goto(`${webUrl}${labelsPath()}`);
    expect(await page.locator('td[data-label="Tasks"]').first().textContent()).toBe('1 task');
    expect(await page.getByText('Deleting it takes it off the 1 task that carries it.').isVisible()).toBe(true);
    await screenshot(page, 'web-labels-on-a-task');

    // Taken off on the task page (its remove button): the API and a second event show none.
    await page.goto(taskPage);
    await page.getByRole('button', { name: 'Remove the label Bug from this task' }).click();
    await page.waitForURL(taskPage);
    expect(await page.locator('.task-labels .chip').count()).toBe(0);
    expect((await taskJson()).labels).toEqual([]);
    const both = await events.waitFor(task.id, 2, 0);
    expect(both[1]!.payload.data.labels).toEqual([]);

    // Deleting: the label is gone from the list.
    await page.goto(`${webUrl}${labelsPath()}`);
    await page.getByRole('button', { name: 'Delete the label Bug' }).click();
    await page.waitForURL(`${webUrl}${labelsPath()}?notice=deleted`);
    expect(await page.getByText('The label was deleted and taken off every task that carried it.').isVisible()).toBe(true);
    expect(await page.locator('tbody .chip').count()).toBe(0);
    await close();
  });

  it('at a phone’s width the labels page holds in one column', async () => {
    const { page, close } = await signedIn('owner', labelsPath());
    await page.locator('#label-name').fill('A label with a rather long name to wrap');
    await page.getByRole('button', { name: 'Create label' }).click();
    await page.waitForURL(`${webUrl}${labelsPath()}?notice=created`);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${webUrl}${labelsPath()}`);
    expect(await fitsWidth(page)).toBe(true);
    await screenshot(page, 'web-labels-phone');
    await close();
  });

  it('a guest gets the refusal page (403) with no data, and a forged add-label post is refused', async () => {
    const opened = await openPage(browser, `${webUrl}${labelsPath()}`);
    const { page } = opened;
    await page.getByRole('link', { name: 'Sign in with your organisation' }).click();
    await page.locator('#email').fill(user('guest').email);
    await page.locator('#password').fill(user('guest').password);
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url() === `${webUrl}${labelsPath()}`),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(response.status()).toBe(403);
    expect(await page.getByText('Guests cannot create, change or put labels on tasks.').isVisible()).toBe(true);
    expect(await page.locator('table').count()).toBe(0);
    expect(await page.locator('#label-name').count()).toBe(0);
    await screenshot(page, 'web-labels-guest');

    // With the guest's own valid CSRF token (from the page's sign-out form), from the app's origin.
    const forged = await postForm(page, `/${urlId}/tasks/${task.id}/labels`, { labelId: '00000000-0000-4000-8000-000000000000' });
    expect(forged.status()).toBe(403);
    expect((await taskJson()).labels).toEqual([]);
    await opened.close();
  });
});
