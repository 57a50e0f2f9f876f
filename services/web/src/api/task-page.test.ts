import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { callUnary } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import { appUrl, signIn, startWeb, uniqueEmail, type SignedIn, type WebHarness } from '../testing/harness.js';

/**
 * The task page with real sessions, the real tasks service (TaskPageService, CreateComment) and
 * the attachments service: hostile names and descriptions stay text, comments are bounded and
 * CSRF-checked, the newest 200 comments are listed, a signed-out visitor is sent to sign in and
 * back. (The browser test covers sign-in through the provider, attachments and the 404s.)
 */
const stack = inject('stack');
let h: WebHarness;
const proto = loadTasksProto().tasks.v1;
const tasks = new proto.TasksService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
const adminService = new proto.AdminService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
const email = uniqueEmail('task-page');
let person: SignedIn;
let urlId: string;
let workspaceId: string;
let ownerId: string;
let projectId: string;
let listId: string;
let prefix: string;

async function createTask(name: string): Promise<{ id: string; ref: string }> {
  const created = await callUnary(tasks, tasks.CreateTask, { workspaceId, projectId, listId, name });
  return { id: created.id, ref: `${prefix}-${created.number}` };
}
const comment = (taskId: string, text: string) => callUnary(tasks, tasks.CreateComment, { workspaceId, taskId, text, actor: { userId: ownerId } });

beforeAll(async () => {
  h = await startWeb(stack);
  const created = await callUnary(adminService, adminService.CreateWorkspace, { name: `Task page ${process.pid}`, plan: 'PLAN_PRO', ownerName: 'Page Owner', ownerEmail: email });
  workspaceId = created.workspace!.id;
  urlId = created.workspace!.urlId;
  ownerId = created.owner!.userId;
  const project = await callUnary(tasks, tasks.CreateProject, { workspaceId, name: 'Hostile Things' });
  projectId = project.id;
  listId = project.defaultListId;
  prefix = (await callUnary(tasks, tasks.ListProjects, { workspaceId })).projects.find((candidate) => candidate.id === projectId)!.taskPrefix;
  person = await signIn(h, email);
});
afterAll(async () => {
  tasks.close();
  adminService.close();
  await h.close();
});

const get = (url: string, cookie?: string) => h.app.inject({ url, headers: cookie ? { cookie } : {} });
const post = (url: string, fields: Record<string, string>, origin = appUrl) =>
  h.app.inject({
    method: 'POST',
    url,
    headers: { cookie: person.cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: person.csrf, ...fields }).toString(),
  });

describe('task page', () => {
  it('shows a hostile name, description and comment as text, with no script and a link only for http(s)', async () => {
    const task = await createTask('<img src=x onerror=alert(1)> "quoted"');
    const nodes = [
      { type: 'paragraph', children: [{ text: '<script>alert(1)</script> javascript:alert(1) https://ok.example/x' }] },
      { type: 'iframe', children: [{ text: 'framed' }] },
    ];
    await callUnary(tasks, tasks.UpdateTask, { workspaceId, id: task.id, description: { nodesJson: JSON.stringify(nodes) } });
    await comment(task.id, '<b>bold?</b> **bold**');
    const page = await get(`/${urlId}/task/${task.ref}`, person.cookie);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'none'");
    expect(page.body).not.toMatch(/<(script|img|iframe|b)[\s>]/);
    expect(page.body).toContain('&lt;img src=x onerror=alert(1)&gt; &quot;quoted&quot;');
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt; javascript:alert(1) <a href="https://ok.example/x" rel="noopener noreferrer nofollow">');
    expect(page.body).toContain('<p>framed</p>');
    expect(page.body).toContain('&lt;b&gt;bold?&lt;/b&gt; <strong>bold</strong>');
    expect(page.body).toContain('<strong>Page Owner</strong> <span class="hint">(you)</span>');
    expect(page.body).toContain('<label for="comment-text">Add a comment</label>');
    expect(page.body).toContain('No attachments.');
  });

  it('takes the reference in any case; a signed-out visitor is sent to sign in and back', async () => {
    const task = await createTask('Case');
    expect((await get(`/${urlId}/task/${task.ref.toLowerCase()}`, person.cookie)).statusCode).toBe(200);
    const signedOut = await get(`/${urlId}/task/${task.ref}`);
    expect(signedOut.statusCode).toBe(303);
    expect(signedOut.headers.location).toBe(`/?returnTo=${encodeURIComponent(`/${urlId}/task/${task.ref}`)}`);
  });

  it('a comment: added (303 back), too long or blank (400, the sentence at the field), forged (403, nothing added)', async () => {
    const task = await createTask('Comments');
    const path = `/${urlId}/task/${task.ref}`;
    const added = await post(`${path}/comments`, { text: 'First' });
    expect(added.statusCode).toBe(303);
    expect(added.headers.location).toBe(`${path}?notice=comment-added#comments`);

    const long = await post(`${path}/comments`, { text: 'x'.repeat(10_001) });
    expect(long.statusCode).toBe(400);
    expect(long.body).toContain('The comment is 10,001 characters long; shorten it to at most 10,000.');
    expect(long.body).toContain('aria-invalid="true"');
    const blank = await post(`${path}/comments`, { text: ' \n ' });
    expect(blank.statusCode).toBe(400);
    expect(blank.body).toContain('Write a comment first, then add it.');

    const forged = await post(`${path}/comments`, { text: 'forged' }, 'https://evil.example');
    expect(forged.statusCode).toBe(403);
    const badToken = await h.app.inject({
      method: 'POST',
      url: `${path}/comments`,
      headers: { cookie: person.cookie, origin: appUrl, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'text=forged&_csrf=guess',
    });
    expect(badToken.statusCode).toBe(403);
    const page = await get(path, person.cookie);
    expect(page.body.match(/<li class="comment"/g)?.length).toBe(1);
    expect(page.body).not.toContain('forged');
    // A comment to no such task: the one 404.
    expect((await post(`/${urlId}/task/${prefix}-99999/comments`, { text: 'lost' })).statusCode).toBe(404);
  });

  it('lists the newest 200 comments, oldest first, and says there are more', async () => {
    const task = await createTask('Busy');
    for (let batch = 0; batch < 201; batch += 50) {
      await Promise.all(Array.from({ length: Math.min(50, 201 - batch) }, (_, index) => comment(task.id, `comment ${batch + index}`)));
    }
    const page = await get(`/${urlId}/task/${task.ref}`, person.cookie);
    expect(page.body.match(/<li class="comment"/g)?.length).toBe(200);
    expect(page.body).toContain('Only the 200 newest comments are shown.');
  });
});
