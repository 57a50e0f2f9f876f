/**
 * ETags on tasks through the real stack: GET /v1/tasks/:id and the task list send a strong ETag;
 * If-None-Match (one tag, a list, weak forms, `*`) answers 304 with no body and the ETag; a PATCH
 * with an If-Match that is no longer current is 412 with nothing written and no event; of concurrent
 * PATCHes sending the same current If-Match exactly one applies; without If-Match nothing changed.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { api, type ApiResponse } from '../support/api.js';
import { expectError, expectStatus, getTask, patchTask, type Task } from '../support/fixtures.js';
import { taskFixture } from '../support/task-fixture.js';

describe('ETags', () => {
  const fx = taskFixture();
  let db: pg.Client;

  beforeAll(async () => {
    db = new pg.Client({ connectionString: inject('stack').databaseUrl });
    await db.connect();
  });
  afterAll(async () => db.end());

  const get = (path: string, headers: Record<string, string> = {}): Promise<ApiResponse> => api('GET', path, { credentials: fx.key, headers });
  const patch = (id: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<ApiResponse<Task>> =>
    api<Task>('PATCH', `/v1/tasks/${id}`, { credentials: fx.key, body, headers });
  const tagOf = (response: ApiResponse): string => {
    const tag = response.headers.get('etag');
    expect(tag).toMatch(/^"[\x21\x23-\x7e]+"$/);
    return tag!;
  };
  const events = async (taskId: string): Promise<number> =>
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM tasks.outbox WHERE aggregateid = $1', [taskId])).rows[0]!.n;
  const expectNotModified = (response: ApiResponse, tag: string): void => {
    expectStatus(response, 304);
    expect(response.text).toBe('');
    expect(response.headers.get('etag')).toBe(tag);
  };

  describe('GET /v1/tasks/:id', () => {
    it('sends a strong ETag that stays while the task does and changes with it', async () => {
      const task = await fx.freshTask();
      const first = await get(`/v1/tasks/${task.id}`);
      expectStatus(first, 200);
      const tag = tagOf(first);
      expect(tagOf(await get(`/v1/tasks/${task.id}`))).toBe(tag);
      await patchTask(fx.key, task.id, { name: 'Changed' });
      expect(tagOf(await get(`/v1/tasks/${task.id}`))).not.toBe(tag);
    });

    it('If-None-Match: the current tag, a list holding it, its weak form and * give 304 without a body', async () => {
      const task = await fx.freshTask();
      const tag = tagOf(await get(`/v1/tasks/${task.id}`));
      for (const header of [tag, `"old", ${tag}`, `W/${tag}`, '*']) expectNotModified(await get(`/v1/tasks/${task.id}`, { 'if-none-match': header }), tag);
    });

    it('If-None-Match with a stale tag gives 200 and the body', async () => {
      const task = await fx.freshTask();
      const stale = tagOf(await get(`/v1/tasks/${task.id}`));
      await patchTask(fx.key, task.id, { name: 'Newer' });
      const response = await get(`/v1/tasks/${task.id}`, { 'if-none-match': stale });
      expectStatus(response, 200);
      expect((response.body as Task).name).toBe('Newer');
      expect(tagOf(response)).not.toBe(stale);
    });

    it('a malformed If-None-Match is a 400; an unknown task stays a 404', async () => {
      const task = await fx.freshTask();
      expectError(await get(`/v1/tasks/${task.id}`, { 'if-none-match': 'not-a-tag' }), 400);
      expectError(await get(`/v1/tasks/${task.id}`, { 'if-none-match': 'x'.repeat(5000) }), 400);
      expectError(await get('/v1/tasks/00000000-0000-4000-8000-000000000000', { 'if-none-match': '*' }), 404);
    });
  });

  describe('GET /v1/projects/:projectId/tasks', () => {
    it('sends an ETag; If-None-Match with it is 304, and any task change makes it stale', async () => {
      const task = await fx.freshTask();
      const path = `/v1/projects/${fx.project.id}/tasks`;
      const first = await get(path);
      expectStatus(first, 200);
      const tag = tagOf(first);
      expectNotModified(await get(path, { 'if-none-match': tag }), tag);
      expectNotModified(await get(path, { 'if-none-match': `"x", W/${tag}` }), tag);
      await patchTask(fx.key, task.id, { name: 'Listed differently' });
      const after = await get(path, { 'if-none-match': tag });
      expectStatus(after, 200);
      expect(tagOf(after)).not.toBe(tag);
      expect((after.body as Array<{ id: string; name: string }>).find((listed) => listed.id === task.id)?.name).toBe('Listed differently');
    });
  });

  describe('PATCH /v1/tasks/:id answers what GET then answers', () => {
    it('byte for byte with the same ETag: the shared write, the locked one (If-Match, a move), a description change and a no-op', async () => {
      const task = await fx.freshTask();
      // [the change, sent with the current tag as If-Match]
      const changes: Array<[Record<string, unknown>, boolean]> = [
        [{ name: 'Renamed' }, false],
        [{ isCompleted: true }, true],
        [{ listId: fx.secondSectionId }, false],
        [{ description: '## Notes\n- **bold** and `code`' }, false],
        [{ name: 'Renamed' }, false],
      ];
      for (const [body, ifMatch] of changes) {
        const answered = await patch(task.id, body, ifMatch ? { 'if-match': tagOf(await get(`/v1/tasks/${task.id}`)) } : {});
        expectStatus(answered, 200);
        const read = await get(`/v1/tasks/${task.id}`);
        expect([answered.text, tagOf(answered)]).toStrictEqual([read.text, tagOf(read)]);
      }
      expect((await getTask(fx.key, task.id)).name).toBe('Renamed');
    });
  });

  describe('PATCH /v1/tasks/:id with If-Match', () => {
    it('applies with the current tag; the answer is the updated task', async () => {
      const task = await fx.freshTask();
      const tag = tagOf(await get(`/v1/tasks/${task.id}`));
      const response = await patch(task.id, { name: 'Matched' }, { 'if-match': tag });
      expectStatus(response, 200);
      expect(response.body.name).toBe('Matched');
      expect((await getTask(fx.key, task.id)).name).toBe('Matched');
    });

    it('a stale tag is 412 with nothing written and no event', async () => {
      const task = await fx.freshTask();
      const stale = tagOf(await get(`/v1/tasks/${task.id}`));
      await patchTask(fx.key, task.id, { name: 'Someone else' });
      const current = await getTask(fx.key, task.id);
      const eventsBefore = await events(task.id);
      for (const header of [stale, `"nope", ${stale}`, `W/${tagOf(await get(`/v1/tasks/${task.id}`))}`]) {
        expectError(await patch(task.id, { name: 'Lost update', isCompleted: true }, { 'if-match': header }), 412);
      }
      expect(await getTask(fx.key, task.id)).toStrictEqual(current);
      expect(await events(task.id)).toBe(eventsBefore);
    });

    it('* and no If-Match apply as before; a malformed If-Match is a 400', async () => {
      const task = await fx.freshTask();
      expectStatus(await patch(task.id, { name: 'Star' }, { 'if-match': '*' }), 200);
      expectStatus(await patch(task.id, { name: 'Plain' }), 200);
      expectError(await patch(task.id, { name: 'Bad' }, { 'if-match': 'abc' }), 400);
      expect((await getTask(fx.key, task.id)).name).toBe('Plain');
    });

    it('of concurrent PATCHes sending the same current tag exactly one wins', async () => {
      const task = await fx.freshTask();
      const tag = tagOf(await get(`/v1/tasks/${task.id}`));
      const eventsBefore = await events(task.id);
      const names = Array.from({ length: 8 }, (_, index) => `Writer ${index}`);
      const answers = await Promise.all(names.map((name) => patch(task.id, { name }, { 'if-match': tag })));
      const won = answers.filter((response) => response.status === 200);
      expect(won).toHaveLength(1);
      for (const response of answers) if (response.status !== 200) expectError(response, 412);
      expect((await getTask(fx.key, task.id)).name).toBe(won[0]!.body.name);
      expect(await events(task.id)).toBe(eventsBefore + 1);
    });
  });
});
