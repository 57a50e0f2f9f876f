// What the app's pages show while they are measured: a pro workspace owned by the local provider's
// owner (signed in without a browser, sign-in.mjs), 10 members, 20 API keys, 3 labels, a project
// with one task (a rich description, the 3 labels, 50 comments, an attachment uploaded in three
// steps) and 5 webhooks on the receiver with deliveries. People-facing things are made through the
// app's own forms (CSRF token and Origin like a browser's post), the rest through the API.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiClient, inParallel } from '../lib/api-client.mjs';
import { log } from '../lib/log.mjs';
import { domain } from '../lib/receiver.mjs';
import { adminCli } from '../lib/stack.mjs';
import { signIn } from './sign-in.mjs';

export const fixtureSize = { members: 10, apiKeys: 20, labels: 3, comments: 50, webhooks: 5, deliveriesPerWebhook: 25 };

const description = `# Launch plan

The **web app** has to be fast *everywhere*; see \`bench/web\` and https://example.com/docs.

## Steps

- sign in without a browser
- build the fixture
  - members, keys, labels
  - webhooks with deliveries

1. measure each page
2. report p50, p95 and max

## Notes

> Server time comes from the app's own histogram.`;

/** GET and form POST against the app with one session (a page's `_csrf` token, Origin = the app). */
function appClient(webUrl, cookie) {
  const request = async (method, path, fields) => {
    const response = await fetch(`${webUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: { cookie, ...(fields ? { origin: webUrl, 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(fields ? { body: new URLSearchParams(fields).toString() } : {}),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    if (response.status >= 400) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
    return text;
  };
  const csrf = (page) => {
    const token = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
    if (!token) throw new Error('no CSRF token on the page');
    return token;
  };
  return {
    get: (path) => request('GET', path),
    /** Posts `fields` with the CSRF token of the page at `formPage`. */
    post: async (formPage, path, fields) => request('POST', path, { _csrf: csrf(await request('GET', formPage)), ...fields }),
  };
}

/** Waits (at most 60 s) until the receiver has seen `count` more deliveries than `before`. */
async function waitForDeliveries(receiver, before, count) {
  const deadline = Date.now() + 60_000;
  while (receiver.state.total - before < count) {
    if (Date.now() > deadline) throw new Error(`only ${receiver.state.total - before} of ${count} webhook deliveries arrived within 60 s`);
    await sleep(200);
  }
}

export async function createWebFixture(stack, receiver) {
  const webUrl = stack.services.webUrl;
  if (!webUrl) throw new Error('the bench stack runs no web service (it needs the identity provider)');
  const owner = stack.idp.users.find((user) => user.role === 'owner');
  log(`web: creating a workspace owned by ${owner.email}, signing in through the provider`);
  const created = await adminCli(stack, ['workspace', 'create', '--name', 'Bench web', '--plan', 'pro', '--owner-name', owner.name, '--owner-email', owner.email]);
  const { urlId } = created.workspace;
  const { call } = apiClient(stack.services.gatewayUrl, created.apiKey.key);
  const { cookie } = await signIn(webUrl, owner);
  const app = appClient(webUrl, cookie);
  const settings = `/${urlId}/settings`;

  log('web: members, API keys and labels through the app’s forms');
  const others = stack.idp.users.filter((user) => user.role !== 'owner').map((user) => ({ email: user.email, role: user.role }));
  for (let i = others.length + 1; i < fixtureSize.members; i += 1) others.push({ email: `bench-person-${i}@example.com`, role: 'member' });
  for (const person of others) await app.post(`${settings}/members`, `${settings}/members`, person);
  // The workspace came with its default key.
  for (let i = 1; i < fixtureSize.apiKeys; i += 1) await app.post(`${settings}/api-keys`, `${settings}/api-keys`, { name: `Bench key ${i}` });
  const colors = ['#1d4ed8', '#b91c1c', '#fde047'];
  for (let i = 0; i < fixtureSize.labels; i += 1) await app.post(`${settings}/labels`, `${settings}/labels`, { name: `Bench label ${i + 1}`, color: colors[i] });

  log(`web: a task with a rich description, ${fixtureSize.comments} comments, an attachment and ${fixtureSize.labels} labels`);
  const project = (await call('POST', '/v1/projects', { name: 'Bench web' })).json;
  const prefix = (await call('GET', '/v1/projects')).json.find((candidate) => candidate.id === project.id).taskPrefix;
  const task = (await call('POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: 'Make every page fast', assigneeId: created.owner.userId })).json;
  const taskPath = `/${urlId}/task/${prefix}-${task.number}`;
  await call('PATCH', `/v1/tasks/${task.id}`, { description });
  await inParallel(fixtureSize.comments, 4, (i) =>
    call('POST', `/v1/tasks/${task.id}/comments`, { text: `Bench comment ${i + 1}: **looks** good\n\n- one point\n- another point` }),
  );
  const file = Buffer.from('bench attachment\n'.repeat(64));
  const upload = (await call('POST', '/v1/attachments/upload', { contentType: 'text/plain', size: file.length })).json;
  const put = await fetch(upload.uploadUrl, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: new Uint8Array(file) });
  if (!put.ok) throw new Error(`the attachment upload answered ${put.status}`);
  await call('POST', `/v1/tasks/${task.id}/attachments`, { attachmentId: upload.attachmentId, name: 'bench-notes.txt', contentType: 'text/plain', size: file.length });
  const labelIds = [...(await app.get(taskPath)).matchAll(/<option value="([^"]+)">Bench label/g)].map((match) => match[1]);
  if (labelIds.length !== fixtureSize.labels) throw new Error(`the task page offers ${labelIds.length} of the ${fixtureSize.labels} labels`);
  for (const labelId of labelIds) await app.post(taskPath, `/${urlId}/tasks/${task.id}/labels`, { labelId });

  log(`web: ${fixtureSize.webhooks} webhooks on the receiver, ${fixtureSize.deliveriesPerWebhook} deliveries each`);
  const webhookIds = [];
  for (let i = 1; i <= fixtureSize.webhooks; i += 1) {
    const host = `web${i}.${domain}`;
    const secret = randomBytes(24).toString('base64url');
    await receiver.addSecret(host, secret);
    webhookIds.push((await call('POST', '/v1/webhooks', { url: `https://${host}:${receiver.port}/hook`, secret, events: ['task.updated'] })).json.id);
  }
  const before = receiver.state.total;
  for (let i = 1; i <= fixtureSize.deliveriesPerWebhook; i += 1) await call('PATCH', `/v1/tasks/${task.id}`, { name: `Make every page fast (round ${i})` });
  await waitForDeliveries(receiver, before, fixtureSize.webhooks * fixtureSize.deliveriesPerWebhook);

  return { webUrl, cookie, urlId, taskPath, webhookId: webhookIds[0] };
}
