/**
 * The task resource's create, read and delete through the real stack: POST /v1/tasks numbers tasks
 * per project (never reusing a number), puts each at the end of its section and refuses bad
 * projects, sections, assignees and bodies without creating anything; the list and single shapes of
 * GET; DELETE removes the task and its comments. Updates are in api-task-updates.test.ts, the
 * description's markdown in api-task-descriptions.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { api } from '../support/api.js';
import {
  createComment,
  createProject,
  createSection,
  createTask,
  expectError,
  expectStatus,
  getTask,
  listTasks,
  TIMESTAMP,
  unknownId,
  type CreatedTask,
  type ListedTask,
  type Task,
} from '../support/fixtures.js';
import { listShape, taskFixture } from '../support/task-fixture.js';

const LIST_KEYS = ['assigneeId', 'createdAt', 'description', 'id', 'isCompleted', 'listId', 'name', 'number', 'order', 'statusId', 'updatedAt'];

describe('tasks', () => {
  const fx = taskFixture();
  const { freshTask, listed } = fx;

  describe('POST /v1/tasks', () => {
    it('answers 201 {id, number} and numbers tasks 1, 2, 3 within each project', async () => {
      const first = await createProject(fx.key);
      const second = await createProject(fx.key);
      for (const number of [1, 2, 3]) {
        const response = await api<CreatedTask>('POST', '/v1/tasks', {
          credentials: fx.key,
          body: { projectId: first.id, listId: first.defaultListId, name: `Task ${number}` },
        });
        expectStatus(response, 201);
        expect(response.body).toStrictEqual({ id: expect.any(String), number });
      }
      const response = await api<CreatedTask>('POST', '/v1/tasks', {
        credentials: fx.key,
        body: { projectId: second.id, listId: second.defaultListId, name: 'First of the second project' },
      });
      expectStatus(response, 201);
      expect(response.body).toStrictEqual({ id: expect.any(String), number: 1 });
    });

    it('never hands out a number twice, even after the last task was deleted (task URLs stay unique)', async () => {
      const own = await createProject(fx.key);
      const first = await createTask(fx.key, { projectId: own.id, listId: own.defaultListId });
      const second = await createTask(fx.key, { projectId: own.id, listId: own.defaultListId });
      expectStatus(await api('DELETE', `/v1/tasks/${second.id}`, { credentials: fx.key }), 204);
      const third = await createTask(fx.key, { projectId: own.id, listId: own.defaultListId });
      expect([first.number, second.number, third.number]).toStrictEqual([1, 2, 3]);
    });

    it('creates an open task with the todo status, no description, no assignee and no labels', async () => {
      const before = Date.now();
      const { id, number } = await createTask(fx.key, { projectId: fx.project.id, listId: fx.project.defaultListId, name: 'Write the brief' });
      const task = await getTask(fx.key, id);
      expect(task).toStrictEqual({
        id,
        number,
        name: 'Write the brief',
        isCompleted: false,
        description: null,
        listId: fx.project.defaultListId,
        assigneeId: null,
        statusId: fx.todo.id,
        projectId: fx.project.id,
        labels: [],
        createdAt: expect.stringMatching(TIMESTAMP),
        updatedAt: expect.stringMatching(TIMESTAMP),
      });
      const createdAt = Date.parse(task.createdAt);
      expect(createdAt).toBeGreaterThanOrEqual(before - 60_000);
      expect(createdAt).toBeLessThanOrEqual(Date.now() + 60_000);
    });

    it('puts each new task at the end of its section (order = previous max + 1)', async () => {
      const { id: sectionId } = await createSection(fx.key, fx.project.id, 'Appending');
      const ids = [];
      for (let index = 0; index < 3; index++) ids.push((await createTask(fx.key, { projectId: fx.project.id, listId: sectionId })).id);
      const tasks = await listTasks(fx.key, fx.project.id);
      const orders = ids.map((id) => tasks.find((task) => task.id === id)!.order);
      expect(orders.every(Number.isInteger)).toBe(true);
      expect(orders).toStrictEqual([orders[0], orders[0]! + 1, orders[0]! + 2]);
    });

    it('assigns the task to a member given as assigneeId', async () => {
      const { id } = await createTask(fx.key, { projectId: fx.project.id, listId: fx.project.defaultListId, assigneeId: fx.member.userId });
      expect((await getTask(fx.key, id)).assigneeId).toBe(fx.member.userId);
    });

    it('answers 400 when listId is a section of another project, and creates nothing', async () => {
      const before = await listTasks(fx.key, fx.project.id);
      const response = await api('POST', '/v1/tasks', {
        credentials: fx.key,
        body: { projectId: fx.project.id, listId: fx.otherProject.defaultListId, name: 'Misplaced' },
      });
      expectError(response, 400);
      expect(await listTasks(fx.key, fx.project.id)).toStrictEqual(before);
      expect(await listTasks(fx.key, fx.otherProject.id)).toStrictEqual([]);
    });

    it('answers 400 when listId is unknown', async () => {
      const response = await api('POST', '/v1/tasks', { credentials: fx.key, body: { projectId: fx.project.id, listId: unknownId(), name: 'x' } });
      expectError(response, 400);
    });

    it('answers 400 when assigneeId is not a member, and creates nothing', async () => {
      const before = await listTasks(fx.key, fx.project.id);
      const response = await api('POST', '/v1/tasks', {
        credentials: fx.key,
        body: { projectId: fx.project.id, listId: fx.project.defaultListId, name: 'Nobody', assigneeId: unknownId() },
      });
      expectError(response, 400);
      expect(await listTasks(fx.key, fx.project.id)).toStrictEqual(before);
    });

    it('answers 404 when projectId is unknown', async () => {
      const response = await api('POST', '/v1/tasks', { credentials: fx.key, body: { projectId: unknownId(), listId: fx.project.defaultListId, name: 'x' } });
      expectError(response, 404);
    });

    it.each([
      ['name', () => ({ projectId: fx.project.id, listId: fx.project.defaultListId })],
      ['listId', () => ({ projectId: fx.project.id, name: 'No section' })],
      ['projectId', () => ({ listId: fx.project.defaultListId, name: 'No project' })],
    ])('answers 400 without %s, and creates nothing', async (_missing, body) => {
      const before = await listTasks(fx.key, fx.project.id);
      expectError(await api('POST', '/v1/tasks', { credentials: fx.key, body: body() }), 400);
      expect(await listTasks(fx.key, fx.project.id)).toStrictEqual(before);
    });

    it('answers 400 to a description at creation (it is set with PATCH)', async () => {
      const response = await api('POST', '/v1/tasks', {
        credentials: fx.key,
        body: { projectId: fx.project.id, listId: fx.project.defaultListId, name: 'Described', description: 'text' },
      });
      expectError(response, 400);
    });
  });

  describe('reading tasks', () => {
    it('GET /v1/projects/:projectId/tasks lists exactly the project tasks in the list shape', async () => {
      const own = await createProject(fx.key);
      const a = await createTask(fx.key, { projectId: own.id, listId: own.defaultListId, name: 'Alpha', assigneeId: fx.member.userId });
      const b = await createTask(fx.key, { projectId: own.id, listId: own.defaultListId, name: 'Beta' });
      const response = await api<ListedTask[]>('GET', `/v1/projects/${own.id}/tasks`, { credentials: fx.key });
      expectStatus(response, 200);
      for (const task of response.body) expect(Object.keys(task).sort()).toStrictEqual(LIST_KEYS);
      const sorted = [...response.body].sort((x, y) => x.number - y.number);
      expect(sorted).toStrictEqual([
        {
          id: a.id,
          number: 1,
          name: 'Alpha',
          isCompleted: false,
          description: null,
          listId: own.defaultListId,
          assigneeId: fx.member.userId,
          statusId: fx.todo.id,
          order: expect.any(Number),
          createdAt: expect.stringMatching(TIMESTAMP),
          updatedAt: expect.stringMatching(TIMESTAMP),
        },
        {
          id: b.id,
          number: 2,
          name: 'Beta',
          isCompleted: false,
          description: null,
          listId: own.defaultListId,
          assigneeId: null,
          statusId: fx.todo.id,
          order: sorted[0]!.order + 1,
          createdAt: expect.stringMatching(TIMESTAMP),
          updatedAt: expect.stringMatching(TIMESTAMP),
        },
      ]);
    });

    it('GET /v1/tasks/:id answers the single shape, consistent with the list', async () => {
      const { id } = await createTask(fx.key, { projectId: fx.project.id, listId: fx.secondSectionId, name: 'Single' });
      const response = await api<Task>('GET', `/v1/tasks/${id}`, { credentials: fx.key });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({
        id,
        number: expect.any(Number),
        name: 'Single',
        isCompleted: false,
        description: null,
        listId: fx.secondSectionId,
        assigneeId: null,
        statusId: fx.todo.id,
        projectId: fx.project.id,
        labels: [],
        createdAt: expect.stringMatching(TIMESTAMP),
        updatedAt: expect.stringMatching(TIMESTAMP),
      });
      expect(await listed(fx.project.id, id)).toStrictEqual(listShape(response.body, expect.any(Number) as number));
    });

    it('answers 404 for an unknown or non-UUID task id, and for the tasks of an unknown project', async () => {
      expectError(await api('GET', `/v1/tasks/${unknownId()}`, { credentials: fx.key }), 404);
      expectError(await api('GET', '/v1/tasks/not-a-uuid', { credentials: fx.key }), 404);
      expectError(await api('GET', `/v1/projects/${unknownId()}/tasks`, { credentials: fx.key }), 404);
      expectError(await api('GET', '/v1/projects/42/tasks', { credentials: fx.key }), 404);
    });
  });

  describe('DELETE /v1/tasks/:id', () => {
    it('answers 204, then the task and its comments are gone', async () => {
      const keep = await freshTask();
      const task = await freshTask();
      const comments = [await createComment(fx.key, task.id, 'first'), await createComment(fx.key, task.id, 'second')];

      const response = await api('DELETE', `/v1/tasks/${task.id}`, { credentials: fx.key });
      expectStatus(response, 204);
      expect(response.text).toBe('');

      expectError(await api('GET', `/v1/tasks/${task.id}`, { credentials: fx.key }), 404);
      expectError(await api('PATCH', `/v1/tasks/${task.id}`, { credentials: fx.key, body: { name: 'ghost' } }), 404);
      expectError(await api('DELETE', `/v1/tasks/${task.id}`, { credentials: fx.key }), 404);
      expectError(await api('POST', `/v1/tasks/${task.id}/comments`, { credentials: fx.key, body: { text: 'late' } }), 404);
      for (const comment of comments) expectError(await api('DELETE', `/v1/comments/${comment.id}`, { credentials: fx.key }), 404);

      const remaining = await listTasks(fx.key, fx.project.id);
      expect(remaining.map((t) => t.id)).not.toContain(task.id);
      expect(await getTask(fx.key, keep.id)).toStrictEqual(keep);
    });

    it('answers 404 for an unknown or non-UUID task id', async () => {
      expectError(await api('DELETE', `/v1/tasks/${unknownId()}`, { credentials: fx.key }), 404);
      expectError(await api('DELETE', '/v1/tasks/0', { credentials: fx.key }), 404);
    });
  });
});
