import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import { checkEnvelope, checkSequence, EventCollector, type Expected } from '../support/event-collector.js';
import {
  addMember,
  createComment,
  createProject,
  createSection,
  createTask,
  getStatuses,
  getTask,
  keyOf,
  patchTask,
  type Status,
  type Task,
} from '../support/fixtures.js';

/*
 * Task events on task-events.v1 from the shared test stack: one event per effective change (none
 * for a no-op, a comment or a DELETE), of the right kind, with exactly the contract's payload and
 * headers, the last one a snapshot of the task; each task's events in order on one partition, also
 * when many tasks or one task change at once. The outbox relay with Kafka or Postgres down and
 * across replicas is in events-kafka-down.test.ts.
 */

describe('task events on task-events.v1', () => {
  let collector: EventCollector;
  let ws: TestWorkspace;
  let key: Credentials;
  let statuses: { todo: Status; done: Status; custom: Status };

  beforeAll(async () => {
    collector = await EventCollector.start(inject('stack').kafkaBrokers);
    ws = await createWorkspace({ plan: 'pro' });
    key = keyOf(ws);
    statuses = await getStatuses(key);
  });
  afterAll(async () => {
    await collector?.stop();
  });

  it('one event per effective change, of the right kind, in order, with exactly the contract payload', async () => {
    const { todo, done, custom } = statuses;
    const member = await addMember(ws.workspace.id, 'member');
    const project = await createProject(key);
    const second = await createSection(key, project.id);
    const created = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'Draft' });
    const id = created.id;
    const expected: Expected[] = [
      ['task.created', { name: 'Draft', isCompleted: false, listId: project.defaultListId, statusId: todo.id, assigneeId: null }],
    ];
    /** A PATCH and the event it must produce (none for a no-op). */
    const change = async (body: Record<string, unknown>, event: Expected | null): Promise<Task> => {
      const task = await patchTask(key, id, body);
      if (event) expected.push(event);
      return task;
    };

    await change({ name: 'Final' }, ['task.updated', { name: 'Final' }]);
    await change({ name: 'Final' }, null);
    await change({ listId: second.id }, ['task.updated', { listId: second.id }]);
    await change({ listId: second.id }, null);
    await change({ assigneeId: member.userId }, ['task.updated', { assigneeId: member.userId }]);
    await change({ description: 'Some **bold** words' }, ['task.updated', { name: 'Final' }]);
    await change({ description: 'Some **bold** words' }, null);
    await change({ isCompleted: true }, ['task.completed', { isCompleted: true, statusId: done.id }]);
    await change({ isCompleted: true }, null);
    await change({ statusId: done.id }, null);
    await change({ isCompleted: false }, ['task.updated', { isCompleted: false, statusId: todo.id }]);
    await change({ statusId: custom.id }, ['task.updated', { isCompleted: false, statusId: custom.id }]);
    await change({ statusId: done.id }, ['task.completed', { isCompleted: true, statusId: done.id }]);
    await change({ assigneeId: null }, ['task.updated', { assigneeId: null, isCompleted: true }]);
    await change({ description: null }, ['task.updated', { assigneeId: null }]);
    const final = await getTask(key, id);

    // Comments emit nothing, and neither does DELETE.
    const comment = await createComment(key, id, 'Looks good');
    expect((await api('DELETE', `/v1/comments/${comment.id}`, { credentials: key })).status).toBe(204);
    expect((await api('DELETE', `/v1/tasks/${id}`, { credentials: key })).status).toBe(204);

    await collector.waitFor({ [id]: expected.length });
    const events = collector.of(id);
    checkSequence(events, expected);
    const identity = { id, number: created.number, projectId: project.id, createdAt: final.createdAt };
    for (const event of events) checkEnvelope(event, identity, ws.workspace.id);
    // The last event is a snapshot of the task as GET shows it (without the description and updatedAt).
    const { description: _description, updatedAt: _updatedAt, ...snapshot } = final;
    expect(events.at(-1)!.payload.data).toStrictEqual(snapshot);
    for (const event of events) expect(Date.parse(event.payload.createdAt)).toBeGreaterThanOrEqual(Date.parse(final.createdAt));
  });

  it('keeps each task’s order when many tasks change at once', async () => {
    const project = await createProject(key);
    const tasks = await Promise.all(
      Array.from({ length: 8 }, (_, index) => createTask(key, { projectId: project.id, listId: project.defaultListId, name: `T${index}` })),
    );
    await Promise.all(
      tasks.map(async (task, index) => {
        await patchTask(key, task.id, { name: `T${index} renamed` });
        await patchTask(key, task.id, { isCompleted: true });
        await patchTask(key, task.id, { isCompleted: false });
      }),
    );
    await collector.waitFor(Object.fromEntries(tasks.map((task) => [task.id, 4])));
    tasks.forEach((task, index) =>
      checkSequence(collector.of(task.id), [
        ['task.created', { name: `T${index}`, number: task.number }],
        ['task.updated', { name: `T${index} renamed` }],
        ['task.completed', { isCompleted: true }],
        ['task.updated', { isCompleted: false }],
      ]),
    );
    // Numbers 1..8, no gaps, no duplicates.
    expect(tasks.map((task) => task.number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('parallel PATCHes of one task: one event per change, the last one is the final state', async () => {
    const project = await createProject(key);
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'Contended' });
    const names = Array.from({ length: 12 }, (_, index) => `Contended ${index}`);
    await Promise.all(names.map((name) => patchTask(key, task.id, { name })));
    const final = await getTask(key, task.id);

    await collector.waitFor({ [task.id]: 1 + names.length });
    const events = collector.of(task.id);
    expect(events.map((event) => event.payload.event)).toEqual(['task.created', ...names.map(() => 'task.updated')]);
    expect(events.slice(1).map((event) => event.payload.data.name).sort()).toEqual([...names].sort());
    expect(events.at(-1)!.payload.data.name).toBe(final.name);
  });
});
