import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, issueToken, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import {
  addMember,
  createComment,
  createProjectWithTasks,
  expectError,
  expectStatus,
  keyOf,
  plainText,
  TIMESTAMP,
  unknownId,
  type CreatedTask,
  type RichTextNode,
} from '../support/fixtures.js';

interface Comment {
  id: string;
  text: RichTextNode[];
  authorName: string;
  authorId: string | null;
  createdAt: string;
}
interface CommentPage {
  comments: Comment[];
  nextCursor: string | null;
}

const list = (credentials: Credentials, taskId: string, query = '') =>
  api<CommentPage>('GET', `/v1/tasks/${taskId}/comments${query}`, { credentials });

/** Every page of a task's comments, following nextCursor. */
async function allPages(credentials: Credentials, taskId: string, limit: number): Promise<CommentPage[]> {
  const pages: CommentPage[] = [];
  let cursor: string | null = null;
  do {
    const response = await list(credentials, taskId, `?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
    expectStatus(response, 200);
    pages.push(response.body);
    cursor = response.body.nextCursor;
  } while (cursor !== null && pages.length < 50);
  return pages;
}

describe('GET /v1/tasks/:id/comments', () => {
  let ws: TestWorkspace;
  let key: Credentials;
  let task: CreatedTask;
  let empty: CreatedTask;
  let created: string[];

  beforeAll(async () => {
    ws = await createWorkspace();
    key = keyOf(ws);
    [task, empty] = (await createProjectWithTasks(key, 2)).tasks as [CreatedTask, CreatedTask];
    created = [];
    for (let index = 1; index <= 7; index++) created.push((await createComment(key, task.id, `Comment **${index}**`)).id);
  });

  it('lists the comments oldest first with id, rich-text text, author and createdAt', async () => {
    const response = await list(key, task.id);
    expectStatus(response, 200);
    expect(response.body.nextCursor).toBeNull();
    expect(response.body.comments.map((comment) => comment.id)).toStrictEqual(created);
    const first = response.body.comments[0]!;
    expect(first).toStrictEqual({ id: created[0], text: expect.any(Array), authorName: ws.apiKey.name, authorId: null, createdAt: expect.stringMatching(TIMESTAMP) });
    expect(plainText(first.text)).toBe('Comment 1');
    expect(JSON.stringify(first.text)).toContain('"bold":true');
    const times = response.body.comments.map((comment) => comment.createdAt);
    expect([...times].sort()).toStrictEqual(times);
  });

  it('answers an empty page for a task without comments', async () => {
    const response = await list(key, empty.id);
    expectStatus(response, 200);
    expect(response.body).toStrictEqual({ comments: [], nextCursor: null });
  });

  it('pages with limit and cursor: every comment once, in order, nextCursor null on the last page', async () => {
    const pages = await allPages(key, task.id, 3);
    expect(pages.map((page) => page.comments.length)).toStrictEqual([3, 3, 1]);
    expect(pages.flatMap((page) => page.comments.map((comment) => comment.id))).toStrictEqual(created);
    expect(pages.at(-1)!.nextCursor).toBeNull();
    // A page that ends exactly on the last comment: the next one is empty.
    const exact = await allPages(key, task.id, 7);
    expect(exact.map((page) => page.comments.length)).toStrictEqual([7]);
  });

  it('a cursor stays valid when its comment is deleted, and new comments appear on later pages', async () => {
    const first = await list(key, task.id, '?limit=2');
    const cursor = first.body.nextCursor!;
    const removed = first.body.comments[1]!.id;
    expectStatus(await api('DELETE', `/v1/comments/${removed}`, { credentials: key }), 204);
    const added = (await createComment(key, task.id, 'Late comment')).id;
    const rest = await list(key, task.id, `?limit=200&cursor=${cursor}`);
    expectStatus(rest, 200);
    expect(rest.body.comments.map((comment) => comment.id)).toStrictEqual([...created.slice(2), added]);
    created = [...created.filter((id) => id !== removed), added];
  });

  it('attributes Bearer comments to the member, readable with a read-only token', async () => {
    const member = await addMember(ws.workspace.id, 'member');
    const writer: Credentials = { bearer: await issueToken(ws.workspace.id, member.userId, 'read write'), workspaceId: ws.workspace.id };
    const reader: Credentials = { bearer: await issueToken(ws.workspace.id, member.userId, 'read'), workspaceId: ws.workspace.id };
    const { id } = await createComment(writer, task.id, 'From the app');
    const response = await list(reader, task.id, '?limit=200');
    expectStatus(response, 200);
    expect(response.body.comments.at(-1)).toMatchObject({ id, authorName: member.name, authorId: member.userId });
    created.push(id);
  });

  it.each([
    ['limit 0', '?limit=0'],
    ['limit 201', '?limit=201'],
    ['a non-numeric limit', '?limit=ten'],
    ['a fractional limit', '?limit=1.5'],
    ['a malformed cursor', '?cursor=not%20a%20cursor'],
    ['a cursor that was never issued', `?cursor=${Buffer.from('hello world').toString('base64url')}`],
    ['a cursor over 128 characters', `?cursor=${'A'.repeat(129)}`],
    ['an unknown parameter', '?offset=3'],
  ])('answers 400 for %s', async (_label, query) => {
    expectError(await list(key, task.id, query), 400);
  });

  it('answers 401 without or with bad credentials', async () => {
    expectError(await list({}, task.id), 401);
    expectError(await list({ apiKey: 'tws_notakey' }, task.id), 401);
  });

  it('answers 403 for a Bearer user who is not a member', async () => {
    const outsider: Credentials = { bearer: await issueToken(ws.workspace.id, unknownId(), 'read'), workspaceId: ws.workspace.id };
    expectError(await list(outsider, task.id), 403);
  });

  it("answers 404 for an unknown, non-UUID or another workspace's task", async () => {
    expectError(await list(key, unknownId()), 404);
    expectError(await list(key, 'task-1'), 404);
    const other = await createWorkspace();
    expectError(await list(keyOf(other), task.id), 404);
  });

  it('answers 404 once the task is deleted', async () => {
    expectStatus(await api('DELETE', `/v1/tasks/${empty.id}`, { credentials: key }), 204);
    expectError(await list(key, empty.id), 404);
  });
});
