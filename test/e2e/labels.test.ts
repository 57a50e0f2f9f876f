import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import type { Credentials } from '../support/api.js';
import { addMember, createProject, createTask, getTask, keyOf, listTasks, patchTask, uniqueName, unknownId } from '../support/fixtures.js';
import { TaskEventReader } from '../support/task-events.js';

/**
 * tasks.v1.LabelsService through the real tasks service, its Postgres, the outbox relay, Kafka and
 * the gateway: owners and members manage labels and put them on tasks, guests are refused,
 * non-members and other workspaces' ids are NOT_FOUND; an effective change of a task's labels shows
 * in GET /v1/tasks/:id at once and is a `task.updated` carrying the labels; a no-op emits nothing;
 * renaming and deleting a label update every task carrying it. The bounds of proto/tasks/v1/labels.proto hold.
 */
const stack = inject('stack');
const proto = loadTasksProto().tasks.v1;
const labels = new proto.LabelsService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());

type Acting = { workspaceId: string; userId: string };
const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as grpc.ServiceError);
const list = (acting: Acting) => callUnary(labels, labels.ListLabels, { acting });
const create = (acting: Acting, name: string, color = '#1D4ED8') => callUnary(labels, labels.CreateLabel, { acting, name, color });
const update = (acting: Acting, id: string, change: { name?: string; color?: string }) => callUnary(labels, labels.UpdateLabel, { acting, id, ...change });
const remove = (acting: Acting, id: string) => callUnary(labels, labels.DeleteLabel, { acting, id });
const addTo = (acting: Acting, taskId: string, labelId: string) => callUnary(labels, labels.AddTaskLabel, { acting, taskId, labelId });
const takeOff = (acting: Acting, taskId: string, labelId: string) => callUnary(labels, labels.RemoveTaskLabel, { acting, taskId, labelId });

let events: TaskEventReader;
let ws: TestWorkspace;
let key: Credentials;
let owner: Acting;
let member: Acting;
let guest: Acting;
let other: TestWorkspace;
let outsider: Acting;
let projectId: string;
let listId: string;

beforeAll(async () => {
  events = await TaskEventReader.start(stack.kafkaBrokers);
  [ws, other] = await Promise.all([createWorkspace({ plan: 'pro' }), createWorkspace()]);
  key = keyOf(ws);
  owner = { workspaceId: ws.workspace.id, userId: ws.owner.userId };
  member = { workspaceId: ws.workspace.id, userId: (await addMember(ws.workspace.id, 'member')).userId };
  guest = { workspaceId: ws.workspace.id, userId: (await addMember(ws.workspace.id, 'guest')).userId };
  outsider = { workspaceId: ws.workspace.id, userId: other.owner.userId };
  const project = await createProject(key);
  projectId = project.id;
  listId = project.defaultListId;
});
afterAll(async () => {
  labels.close();
  await events?.stop();
});

const newTask = async (name = uniqueName('Labelled')) => createTask(key, { projectId, listId, name });

describe('LabelsService: labels of a workspace', () => {
  it('a member creates, lists (by name, with task counts), renames, recolours and deletes labels', async () => {
    const created = await create(member, '  Zebra ', '#a1b2c3');
    expect(created.label).toMatchObject({ name: 'Zebra', color: '#A1B2C3' });
    const alpha = (await create(owner, 'alpha', '#000000')).label!;
    const listed = (await list(member)).labels;
    const mine = listed.filter((row) => [alpha.id, created.label!.id].includes(row.label!.id));
    expect(mine.map((row) => row.label!.name)).toEqual(['alpha', 'Zebra']);
    expect(mine.every((row) => row.taskCount === 0)).toBe(true);

    expect((await update(member, alpha.id, { name: 'Alpha one' })).label).toMatchObject({ id: alpha.id, name: 'Alpha one', color: '#000000' });
    expect((await update(member, alpha.id, { color: '#ffffff' })).label).toMatchObject({ name: 'Alpha one', color: '#FFFFFF' });
    // The same name in another case is that label's own rename, not a clash.
    expect((await update(owner, alpha.id, { name: 'ALPHA ONE' })).label?.name).toBe('ALPHA ONE');
    expect(await remove(member, alpha.id)).toMatchObject({ tasksUpdated: 0 });
    expect((await list(owner)).labels.map((row) => row.label!.id)).not.toContain(alpha.id);
    expect((await failure(remove(owner, alpha.id)))?.code).toBe(grpc.status.NOT_FOUND);
  });

  it('holds the bounds: names 1–50 characters, unique ignoring case; #RRGGBB colours', async () => {
    const taken = (await create(member, uniqueName('Taken'))).label!;
    const refused = async (promise: Promise<unknown>, code: grpc.status, details: RegExp) => {
      const error = await failure(promise);
      expect(error?.code, error?.details).toBe(code);
      expect(error?.details).toMatch(details);
    };
    await refused(create(member, taken.name.toUpperCase()), grpc.status.ALREADY_EXISTS, /already exists/);
    await refused(create(member, '   '), grpc.status.INVALID_ARGUMENT, /name is required/);
    await refused(create(member, 'x'.repeat(51)), grpc.status.INVALID_ARGUMENT, /at most 50/);
    expect((await create(member, 'y'.repeat(50))).label?.name).toHaveLength(50);
    for (const color of ['red', '#fff', '#12345G', '']) await refused(create(member, uniqueName('C'), color), grpc.status.INVALID_ARGUMENT, /#RRGGBB/);
    const second = (await create(member, uniqueName('Second'))).label!;
    await refused(update(member, second.id, { name: taken.name.toLowerCase() }), grpc.status.ALREADY_EXISTS, /already exists/);
    await refused(update(member, second.id, {}), grpc.status.INVALID_ARGUMENT, /no fields/);
  });

  it('at most 200 labels per workspace (FAILED_PRECONDITION)', async () => {
    const small = await createWorkspace();
    const acting = { workspaceId: small.workspace.id, userId: small.owner.userId };
    for (let start = 0; start < 200; start += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, index) => create(acting, `label ${start + index}`)));
    }
    const error = await failure(create(acting, 'one too many'));
    expect(error?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(error?.details).toMatch(/at most 200/);
    expect((await list(acting)).labels).toHaveLength(200);
  });

  it('refuses guests (PERMISSION_DENIED) and answers non-members and other workspaces’ ids with NOT_FOUND', async () => {
    const label = (await create(member, uniqueName('Guarded'))).label!;
    const task = await newTask();
    const guestCalls = [list(guest), create(guest, 'nope'), update(guest, label.id, { name: 'x' }), remove(guest, label.id), addTo(guest, task.id, label.id), takeOff(guest, task.id, label.id)];
    for (const error of await Promise.all(guestCalls.map(failure))) {
      expect(error?.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(error?.details).toMatch(/guests cannot manage labels/);
    }
    const outsiderCalls = [list(outsider), create(outsider, 'nope'), remove(outsider, label.id), addTo(outsider, task.id, label.id)];
    for (const error of await Promise.all(outsiderCalls.map(failure))) expect(error?.code).toBe(grpc.status.NOT_FOUND);
    expect((await list(member)).labels.map((row) => row.label!.name)).not.toContain('nope');
    expect((await failure(list({ workspaceId: unknownId(), userId: owner.userId })))?.code).toBe(grpc.status.NOT_FOUND);
    expect((await failure(list({ workspaceId: 'not-a-uuid', userId: owner.userId })))?.code).toBe(grpc.status.NOT_FOUND);

    // The other workspace's label on this workspace's task, and this label on the other's task.
    const otherActing = { workspaceId: other.workspace.id, userId: other.owner.userId };
    const theirLabel = (await create(otherActing, uniqueName('Theirs'))).label!;
    const theirProject = await createProject(keyOf(other));
    const theirTask = await createTask(keyOf(other), { projectId: theirProject.id, listId: theirProject.defaultListId, name: 'Theirs' });
    expect((await failure(addTo(member, task.id, theirLabel.id)))?.code).toBe(grpc.status.NOT_FOUND);
    expect((await failure(addTo(member, theirTask.id, label.id)))?.code).toBe(grpc.status.NOT_FOUND);
    expect((await failure(addTo(otherActing, theirTask.id, label.id)))?.code).toBe(grpc.status.NOT_FOUND);
    expect((await failure(update(member, theirLabel.id, { name: 'mine now' })))?.code).toBe(grpc.status.NOT_FOUND);
    expect((await failure(remove(member, theirLabel.id)))?.code).toBe(grpc.status.NOT_FOUND);
    expect((await getTask(keyOf(other), theirTask.id)).labels).toEqual([]);
    expect((await list(otherActing)).labels.map((row) => row.label!.name)).toEqual([theirLabel.name]);
  });
});

describe('LabelsService: labels on tasks', () => {
  it('an add shows in GET /v1/tasks/:id at once and is one task.updated carrying the labels; a no-op emits nothing', async () => {
    const bug = (await create(member, uniqueName('bug'), '#B91C1C')).label!;
    const task = await newTask();
    const before = await getTask(key, task.id);
    expect(before.labels).toEqual([]);

    const added = await addTo(member, task.id, bug.id);
    expect(added.result).toMatchObject({ changed: true, taskNumber: task.number, taskPrefix: expect.stringMatching(/^[A-Z][A-Z0-9]*$/) });
    expect(added.result?.labels).toEqual([{ id: bug.id, name: bug.name, color: '#B91C1C' }]);
    const after = await getTask(key, task.id);
    expect(after.labels).toEqual([{ id: bug.id, name: bug.name, color: '#B91C1C' }]);
    // Nothing else of the task changed (but its updatedAt: a label change is a change of the task).
    expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
    expect({ ...after, labels: [], updatedAt: before.updatedAt }).toEqual(before);

    expect((await addTo(owner, task.id, bug.id)).result).toMatchObject({ changed: false, labels: [{ id: bug.id }] });
    const [updated] = await events.waitFor(task.id, 1);
    expect(events.of(task.id)).toHaveLength(1);
    expect(updated!.payload.data.labels).toEqual([{ id: bug.id, name: bug.name, color: '#B91C1C' }]);
    expect(updated!.payload.data.name).toBe(after.name);

    // Removing: an event without it; removing again: nothing.
    expect((await takeOff(member, task.id, bug.id)).result).toMatchObject({ changed: true, labels: [] });
    expect((await takeOff(member, task.id, bug.id)).result).toMatchObject({ changed: false });
    expect((await getTask(key, task.id)).labels).toEqual([]);
    const both = await events.waitFor(task.id, 2);
    expect(both).toHaveLength(2);
    expect(both[1]!.payload.data.labels).toEqual([]);
  });

  it('a PATCH after a label change carries the labels in its event; the project list keeps its contract shape', async () => {
    const label = (await create(member, uniqueName('patched'), '#00FF00')).label!;
    const task = await newTask();
    await addTo(member, task.id, label.id);
    await patchTask(key, task.id, { name: 'Renamed by PATCH' });
    const [, patched] = await events.waitFor(task.id, 2);
    expect(patched!.payload.data).toMatchObject({ name: 'Renamed by PATCH', labels: [{ id: label.id, name: label.name, color: '#00FF00' }] });
    const listed = (await listTasks(key, projectId)).find((item) => item.id === task.id);
    expect(listed).toBeDefined();
    expect(Object.keys(listed!)).not.toContain('labels');
  });

  it('renaming or recolouring a label updates every task carrying it; deleting takes it off each (one event per task)', async () => {
    const shared = (await create(member, uniqueName('shared'), '#FDE047')).label!;
    const keep = (await create(member, uniqueName('keep'), '#0000FF')).label!;
    const [first, second, bystander] = await Promise.all([newTask(), newTask(), newTask()]);
    await addTo(member, first!.id, shared.id);
    await addTo(member, second!.id, shared.id);
    await addTo(member, second!.id, keep.id);
    await addTo(member, bystander!.id, keep.id);

    const renamed = await update(owner, shared.id, { name: `${shared.name} v2` });
    expect(renamed.tasksUpdated).toBe(2);
    expect((await getTask(key, first!.id)).labels).toEqual([{ id: shared.id, name: `${shared.name} v2`, color: '#FDE047' }]);
    expect((await update(owner, shared.id, { name: `${shared.name} v2` })).tasksUpdated).toBe(0);
    expect((await list(member)).labels.find((row) => row.label!.id === shared.id)?.taskCount).toBe(2);

    expect(await remove(member, shared.id)).toEqual({ tasksUpdated: 2 });
    expect((await getTask(key, first!.id)).labels).toEqual([]);
    expect((await getTask(key, second!.id)).labels).toEqual([{ id: keep.id, name: keep.name, color: '#0000FF' }]);

    const firstEvents = await events.waitFor(first!.id, 3);
    expect(firstEvents.map((event) => event.payload.data.labels.map((label) => label.name))).toEqual([[shared.name], [`${shared.name} v2`], []]);
    const secondEvents = await events.waitFor(second!.id, 4, 0);
    expect(secondEvents.at(-1)!.payload.data.labels).toEqual([{ id: keep.id, name: keep.name, color: '#0000FF' }]);
    // The task carrying only the other label got its add, and nothing from the rename or delete.
    expect(events.of(bystander!.id)).toHaveLength(1);
  });

  it('at most 20 labels on a task (FAILED_PRECONDITION); unknown ids are NOT_FOUND', async () => {
    const task = await newTask();
    const made = await Promise.all(Array.from({ length: 21 }, (_, index) => create(member, uniqueName(`many ${index}`), '#FFFFFF')));
    for (const created of made.slice(0, 20)) await addTo(member, task.id, created.label!.id);
    const error = await failure(addTo(member, task.id, made[20]!.label!.id));
    expect(error?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(error?.details).toMatch(/at most 20/);
    expect((await getTask(key, task.id)).labels).toHaveLength(20);
    expect((await addTo(member, task.id, made[0]!.label!.id)).result?.changed).toBe(false);

    expect((await failure(addTo(member, unknownId(), made[0]!.label!.id)))?.code).toBe(grpc.status.NOT_FOUND);
    expect((await failure(addTo(member, task.id, unknownId())))?.code).toBe(grpc.status.NOT_FOUND);
    expect((await failure(addTo(member, 'not-a-task', made[0]!.label!.id)))?.code).toBe(grpc.status.NOT_FOUND);
  });
});
