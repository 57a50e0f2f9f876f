/**
 * PATCH /v1/tasks/:id through the real stack: each field alone and together, isCompleted and statusId
 * kept consistent (done completes, todo and custom statuses reopen, contradictions are 400), moves
 * to the end of another section, assignees, and every refused body leaving the task unchanged; then
 * concurrency: parallel creations get dense numbers and positions, and parallel PATCHes of one task
 * all apply one after another.
 */
import { describe, expect, it } from 'vitest';
import { api, type Credentials } from '../support/api.js';
import {
  createApiKey,
  createProject,
  createSection,
  createTask,
  expectError,
  expectStatus,
  getTask,
  listTasks,
  patchTask,
  unknownId,
  type CreatedTask,
  type Task,
} from '../support/fixtures.js';
import { listShape, taskFixture } from '../support/task-fixture.js';

describe('tasks', () => {
  const fx = taskFixture();
  const { freshTask } = fx;

  describe('PATCH /v1/tasks/:id', () => {
    /** PATCHes and checks the 200 answer and a later GET both equal `expected`. */
    const patchExpecting = async (id: string, body: Record<string, unknown>, expected: Task): Promise<void> => {
      const response = await api<Task>('PATCH', `/v1/tasks/${id}`, { credentials: fx.key, body });
      expectStatus(response, 200);
      // A change moves updatedAt on; the answer and a later GET agree on it.
      expect(Date.parse(response.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(expected.updatedAt));
      const written = { ...expected, updatedAt: response.body.updatedAt };
      expect(response.body).toStrictEqual(written);
      expect(await getTask(fx.key, id)).toStrictEqual(written);
    };
    /** PATCHes, expects `status` with the error shape, and checks the task is unchanged. */
    const patchRejected = async (task: Task, body: Record<string, unknown>, status = 400): Promise<void> => {
      expectError(await api('PATCH', `/v1/tasks/${task.id}`, { credentials: fx.key, body }), status);
      expect(await getTask(fx.key, task.id)).toStrictEqual(task);
    };

    it('changes only the name', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { name: 'Renamed' }, { ...task, name: 'Renamed' });
    });

    it('isCompleted true completes the task and sets the done status', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { isCompleted: true }, { ...task, isCompleted: true, statusId: fx.done.id });
    });

    it('isCompleted false reopens the task and sets the todo status', async () => {
      const task = await freshTask();
      await patchTask(fx.key, task.id, { isCompleted: true });
      await patchExpecting(task.id, { isCompleted: false }, { ...task, isCompleted: false, statusId: fx.todo.id });
    });

    it('statusId done completes the task', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { statusId: fx.done.id }, { ...task, statusId: fx.done.id, isCompleted: true });
    });

    it('statusId todo reopens a completed task', async () => {
      const task = await freshTask();
      await patchTask(fx.key, task.id, { isCompleted: true });
      await patchExpecting(task.id, { statusId: fx.todo.id }, { ...task, statusId: fx.todo.id, isCompleted: false });
    });

    it('a custom statusId makes a completed task not completed', async () => {
      const task = await freshTask();
      await patchTask(fx.key, task.id, { statusId: fx.done.id });
      await patchExpecting(task.id, { statusId: fx.custom.id }, { ...task, statusId: fx.custom.id, isCompleted: false });
    });

    it('a custom statusId keeps an open task open', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { statusId: fx.custom.id }, { ...task, statusId: fx.custom.id, isCompleted: false });
    });

    it('accepts isCompleted and statusId together when they agree', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { isCompleted: true, statusId: fx.done.id }, { ...task, isCompleted: true, statusId: fx.done.id });
      await patchExpecting(task.id, { isCompleted: false, statusId: fx.custom.id }, { ...task, isCompleted: false, statusId: fx.custom.id });
      await patchExpecting(task.id, { isCompleted: false, statusId: fx.todo.id }, { ...task, isCompleted: false, statusId: fx.todo.id });
    });

    it.each([
      ['true with the todo status', true, 'todo'],
      ['true with a custom status', true, 'custom'],
      ['false with the done status', false, 'done'],
    ] as const)('answers 400 to isCompleted %s and changes nothing', async (_label, isCompleted, which) => {
      const task = await freshTask();
      const statusId = fx[which].id;
      await patchRejected(task, { isCompleted, statusId });
    });

    it('answers 400 to an unknown statusId and changes nothing', async () => {
      await patchRejected(await freshTask(), { statusId: unknownId() });
    });

    it('moves the task to another section of the same project, at the end of it', async () => {
      const { id: target } = await createSection(fx.key, fx.project.id, 'Target');
      const occupants = [];
      for (let index = 0; index < 2; index++) occupants.push((await createTask(fx.key, { projectId: fx.project.id, listId: target })).id);
      const task = await freshTask();
      await patchExpecting(task.id, { listId: target }, { ...task, listId: target });
      const tasks = await listTasks(fx.key, fx.project.id);
      const maxBefore = Math.max(...occupants.map((id) => tasks.find((t) => t.id === id)!.order));
      expect(tasks.find((t) => t.id === task.id)).toStrictEqual(listShape({ ...task, listId: target, updatedAt: expect.stringMatching(/Z$/) as string }, maxBefore + 1));
    });

    it('answers 400 to a listId of another project and leaves the task where it was', async () => {
      await patchRejected(await freshTask(), { listId: fx.otherProject.defaultListId });
    });

    it('answers 400 to an unknown listId', async () => {
      await patchRejected(await freshTask(), { listId: unknownId() });
    });

    it('assigns and unassigns with assigneeId', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { assigneeId: fx.member.userId }, { ...task, assigneeId: fx.member.userId });
      await patchExpecting(task.id, { assigneeId: fx.ws.owner.userId }, { ...task, assigneeId: fx.ws.owner.userId });
      await patchExpecting(task.id, { assigneeId: null }, { ...task, assigneeId: null });
    });

    it('answers 400 to an assigneeId that is not a member', async () => {
      const task = await freshTask();
      await patchTask(fx.key, task.id, { assigneeId: fx.member.userId });
      await patchRejected(await getTask(fx.key, task.id), { assigneeId: unknownId() });
    });

    it('changes several fields in one call', async () => {
      const task = await freshTask();
      await patchExpecting(
        task.id,
        { name: 'All at once', isCompleted: true, assigneeId: fx.member.userId, listId: fx.secondSectionId },
        { ...task, name: 'All at once', isCompleted: true, statusId: fx.done.id, assigneeId: fx.member.userId, listId: fx.secondSectionId },
      );
    });

    it.each([
      ['an empty body', {}],
      ['an unknown field', { priority: 'high' }],
      ['a non-string name', { name: 7 }],
      ['a null name', { name: null }],
      ['a non-boolean isCompleted', { isCompleted: 'yes' }],
      ['a non-string statusId', { statusId: 5 }],
      ['a numeric description', { description: 42 }],
      ['a description object that is not an array', { description: { type: 'paragraph', children: [{ text: 'x' }] } }],
      ['a description array of non-nodes', { description: [1, 'two'] }],
    ])('answers 400 to %s and changes nothing', async (_label, body) => {
      await patchRejected(await freshTask(), body);
    });

    it('answers 404 for an unknown or non-UUID task id', async () => {
      expectError(await api('PATCH', `/v1/tasks/${unknownId()}`, { credentials: fx.key, body: { name: 'x' } }), 404);
      expectError(await api('PATCH', '/v1/tasks/abc', { credentials: fx.key, body: { name: 'x' } }), 404);
    });
  });

  describe('concurrency', () => {
    /** A key of its own, so a burst does not spend the rest of the file's rate budget. */
    const burstKeyOf = async (): Promise<Credentials> => ({ apiKey: (await createApiKey(fx.ws.workspace.id, fx.ws.owner.userId)).key });
    /** A project under a key of its own, and `count` POST /v1/tasks at once into its default section, `fields(index)` in each body. */
    const createInParallel = async (count: number, fields: (index: number) => Record<string, unknown>) => {
      const burstKey = await burstKeyOf();
      const target = await createProject(burstKey);
      const responses = await Promise.all(
        Array.from({ length: count }, (_, index) =>
          api<CreatedTask>('POST', '/v1/tasks', { credentials: burstKey, body: { projectId: target.id, listId: target.defaultListId, ...fields(index) } }),
        ),
      );
      return { burstKey, target, responses };
    };

    it('30 parallel creations in one project get numbers exactly 1..30 and distinct positions', async () => {
      const { burstKey, target, responses } = await createInParallel(30, (index) => ({ name: `Parallel ${index}` }));
      expect(responses.map((response) => response.status)).toStrictEqual(Array.from({ length: 30 }, () => 201));
      const numbers = responses.map((response) => response.body.number).sort((a, b) => a - b);
      expect(numbers).toStrictEqual(Array.from({ length: 30 }, (_, index) => index + 1));

      const tasks = await listTasks(burstKey, target.id);
      expect(tasks.map((task) => task.number).sort((a, b) => a - b)).toStrictEqual(numbers);
      expect(new Set(tasks.map((task) => task.order)).size).toBe(30);
    });

    it('parallel creations and moves into one section each go to its end: positions exactly 0..n-1', async () => {
      const burstKey = await burstKeyOf();
      const target = await createProject(burstKey);
      const { id: elsewhere } = await createSection(burstKey, target.id);
      const movers: string[] = [];
      for (let index = 0; index < 6; index++) movers.push((await createTask(burstKey, { projectId: target.id, listId: elsewhere })).id);
      await Promise.all([
        ...Array.from({ length: 24 }, () => createTask(burstKey, { projectId: target.id, listId: target.defaultListId })),
        ...movers.map((id) => patchTask(burstKey, id, { listId: target.defaultListId })),
      ]);

      const inSection = (await listTasks(burstKey, target.id)).filter((task) => task.listId === target.defaultListId);
      expect(inSection.map((task) => task.order).sort((a, b) => a - b)).toStrictEqual(Array.from({ length: 30 }, (_, index) => index));
    });

    it('parallel creations with some bad assignees: only those get 400, the others dense numbers and positions', async () => {
      const { burstKey, target, responses } = await createInParallel(20, (index) => ({
        name: `Mixed ${index}`,
        ...(index % 4 === 0 ? { assigneeId: unknownId() } : index % 4 === 1 ? { assigneeId: fx.member.userId } : {}),
      }));
      responses.forEach((response, index) => (index % 4 === 0 ? expectError(response, 400) : expectStatus(response, 201)));
      const tasks = await listTasks(burstKey, target.id);
      expect(tasks.map((task) => task.number).sort((a, b) => a - b)).toStrictEqual(Array.from({ length: 15 }, (_, index) => index + 1));
      expect(tasks.map((task) => task.order).sort((a, b) => a - b)).toStrictEqual(Array.from({ length: 15 }, (_, index) => index));
      expect(tasks.filter((task) => task.assigneeId === fx.member.userId)).toHaveLength(5);
    });

    it('parallel PATCHes of one task all apply, one after another: each answer is its own change', async () => {
      const burstKey = await burstKeyOf();
      const task = await createTask(burstKey, { projectId: fx.project.id, listId: fx.project.defaultListId });
      const names = Array.from({ length: 16 }, (_, index) => `Contended ${index}`);
      const answers = await Promise.all(
        names.map((name, index) => patchTask(burstKey, task.id, index % 2 === 0 ? { name } : { name, isCompleted: index % 4 === 1 })),
      );
      expect(answers.map((answer) => answer.name)).toStrictEqual(names);
      for (const answer of answers) expect(answer.statusId).toBe(answer.isCompleted ? fx.done.id : fx.todo.id);
      expect(names).toContain((await getTask(burstKey, task.id)).name);
    });
  });
});
