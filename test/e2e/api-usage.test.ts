import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, issueToken, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import { attach, MiB } from '../support/attachments.js';
import { createProject, createTask, expectError, expectStatus, keyOf, unknownId, type CreatedProject } from '../support/fixtures.js';

interface Usage {
  plan: 'free' | 'pro';
  projects: { count: number; limit: number | null };
  tasks: { count: number; limit: number | null };
  attachments: { count: number; bytes: number; maxFileBytes: number } | null;
}

async function usage(credentials: Credentials): Promise<Usage> {
  const response = await api<Usage>('GET', '/v1/usage', { credentials });
  expectStatus(response, 200);
  return response.body;
}

describe('GET /v1/usage', () => {
  let ws: TestWorkspace;
  let key: Credentials;

  beforeAll(async () => {
    ws = await createWorkspace();
    key = keyOf(ws);
  });

  it('answers a new free workspace: its plan, limits and zero counts', async () => {
    expect(await usage(key)).toStrictEqual({
      plan: 'free',
      projects: { count: 0, limit: 3 },
      tasks: { count: 0, limit: 300 },
      attachments: { count: 0, bytes: 0, maxFileBytes: 25 * MiB },
    });
  });

  it('counts move after creating a project, tasks and an attachment, and after deleting a task', async () => {
    const project: CreatedProject = await createProject(key);
    expect((await usage(key)).projects.count).toBe(1);
    const first = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    await createTask(key, { projectId: project.id, listId: project.defaultListId });
    expect((await usage(key)).tasks.count).toBe(2);

    const bytes = Buffer.from('usage counts these bytes\n');
    await attach(key, first.id, { name: 'notes.txt', contentType: 'text/plain', bytes });
    expect((await usage(key)).attachments).toStrictEqual({ count: 1, bytes: bytes.length, maxFileBytes: 25 * MiB });

    expectStatus(await api('DELETE', `/v1/tasks/${first.id}`, { credentials: key }), 204);
    expect((await usage(key)).tasks.count).toBe(1);
  });

  it('reaches the limit exactly when creation starts answering 403', async () => {
    while ((await usage(key)).projects.count < 3) await createProject(key);
    const atLimit = await usage(key);
    expect(atLimit.projects).toStrictEqual({ count: 3, limit: 3 });
    expectError(await api('POST', '/v1/projects', { credentials: key, body: { name: 'One too many' } }), 403);
    expect((await usage(key)).projects.count).toBe(3);
  });

  it('a pro workspace has no project or task limit and the larger upload limit', async () => {
    const pro = await createWorkspace({ plan: 'pro' });
    expect(await usage(keyOf(pro))).toStrictEqual({
      plan: 'pro',
      projects: { count: 0, limit: null },
      tasks: { count: 0, limit: null },
      attachments: { count: 0, bytes: 0, maxFileBytes: 100 * MiB },
    });
  });

  it("is the credentials' own workspace: another workspace's counts are its own", async () => {
    const other = await createWorkspace();
    expect((await usage(keyOf(other))).projects.count).toBe(0);
  });

  it('answers a Bearer read token of a member', async () => {
    const reader: Credentials = { bearer: await issueToken(ws.workspace.id, ws.owner.userId, 'read'), workspaceId: ws.workspace.id };
    expect((await usage(reader)).projects.count).toBe(3);
  });

  it('answers 401 without or with bad credentials, 403 for a Bearer user who is not a member', async () => {
    expectError(await api('GET', '/v1/usage', {}), 401);
    expectError(await api('GET', '/v1/usage', { credentials: { apiKey: 'tws_notakey' } }), 401);
    const outsider: Credentials = { bearer: await issueToken(ws.workspace.id, unknownId(), 'read'), workspaceId: ws.workspace.id };
    expectError(await api('GET', '/v1/usage', { credentials: outsider }), 403);
  });
});
