import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, issueToken, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import {
  createComment,
  createProjectWithTasks,
  expectError,
  expectStatus,
  getTask,
  keyOf,
  unknownId,
  type CreatedTask,
} from '../support/fixtures.js';

describe('comments', () => {
  let ws: TestWorkspace;
  let key: Credentials;
  let task: CreatedTask;

  beforeAll(async () => {
    ws = await createWorkspace();
    key = keyOf(ws);
    task = (await createProjectWithTasks(key, 1)).tasks[0]!;
  });

  it('POST /v1/tasks/:id/comments answers 201 {id}, a new id per comment', async () => {
    const ids = [];
    for (const text of ['Looks good to me', 'Second thought']) {
      const response = await api<{ id: string }>('POST', `/v1/tasks/${task.id}/comments`, { credentials: key, body: { text } });
      expectStatus(response, 201);
      expect(response.body).toStrictEqual({ id: expect.any(String) });
      ids.push(response.body.id);
    }
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('accepts markdown with several blocks and leaves the task as it was', async () => {
    const before = await getTask(key, task.id);
    const text = '# Review\n\n- **bold** point\n- *italic* point\n\n1. first\n2. second\n\n> quoted `code`';
    const response = await api<{ id: string }>('POST', `/v1/tasks/${task.id}/comments`, { credentials: key, body: { text } });
    expectStatus(response, 201);
    expect(response.body).toStrictEqual({ id: expect.any(String) });
    expect(await getTask(key, task.id)).toStrictEqual(before);
  });

  it.each([
    ['without text', {}],
    ['with a non-string text', { text: 42 }],
    ['with a null text', { text: null }],
    ['with an unknown field', { text: 'hello', author: 'someone else' }],
  ])('answers 400 %s', async (_label, body) => {
    expectError(await api('POST', `/v1/tasks/${task.id}/comments`, { credentials: key, body }), 400);
  });

  it('answers 404 for an unknown or non-UUID task', async () => {
    expectError(await api('POST', `/v1/tasks/${unknownId()}/comments`, { credentials: key, body: { text: 'hello' } }), 404);
    expectError(await api('POST', '/v1/tasks/task-1/comments', { credentials: key, body: { text: 'hello' } }), 404);
  });

  it('DELETE /v1/comments/:id answers 204 with no body, then 404', async () => {
    const { id } = await createComment(key, task.id);
    const response = await api('DELETE', `/v1/comments/${id}`, { credentials: key });
    expectStatus(response, 204);
    expect(response.text).toBe('');
    expectError(await api('DELETE', `/v1/comments/${id}`, { credentials: key }), 404);
  });

  it('DELETE /v1/comments/:id answers 404 for an unknown or non-UUID id', async () => {
    expectError(await api('DELETE', `/v1/comments/${unknownId()}`, { credentials: key }), 404);
    expectError(await api('DELETE', '/v1/comments/1', { credentials: key }), 404);
  });

  it('creates and deletes comments with a Bearer write token', async () => {
    const token = await issueToken(ws.workspace.id, ws.owner.userId, 'read write');
    const bearer: Credentials = { bearer: token, workspaceId: ws.workspace.id };
    const created = await api<{ id: string }>('POST', `/v1/tasks/${task.id}/comments`, { credentials: bearer, body: { text: 'From the app' } });
    expectStatus(created, 201);
    expect(created.body).toStrictEqual({ id: expect.any(String) });
    expectStatus(await api('DELETE', `/v1/comments/${created.body.id}`, { credentials: bearer }), 204);

    // A comment made with a token belongs to the workspace like any other: the API key can delete it.
    const another = await api<{ id: string }>('POST', `/v1/tasks/${task.id}/comments`, { credentials: bearer, body: { text: 'Again' } });
    expectStatus(another, 201);
    expectStatus(await api('DELETE', `/v1/comments/${another.body.id}`, { credentials: key }), 204);
  });
});
