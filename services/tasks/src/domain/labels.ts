import { DomainError, forbidden, inTransaction, invalid, isPgError, notFound, pgErrorCodes, recordAudit, type Pool, type Queryable } from '@tws/common';
import * as store from '../store/labels.js';
import { readTasksForChange } from '../store/task-changes.js';
import { getMember } from '../store/workspaces.js';
import type { Label, Task } from './model.js';
import { buildTaskEvent } from './task-event.js';
import { pathId } from './validation.js';

/**
 * The workspace's labels and the labels on its tasks (LabelsService, called by services/web):
 * - owners and members manage labels and put them on tasks; guests cannot (PERMISSION_DENIED);
 * - someone who is not a member, a workspace that does not exist, and a task or label of another
 *   workspace: NOT_FOUND alike;
 * - an effective change of a task's labels is a task change: one `task.updated` per task, written
 *   to the outbox in the transaction of the change, with the task's labels after it. Deleting,
 *   renaming or recolouring a label changes the `labels` of every task carrying it, so each of
 *   them gets its `task.updated` too (in one outbox statement). A no-op writes nothing.
 */
export interface ActingPerson {
  workspaceId: string;
  userId: string;
}

export const labelBounds = { nameLength: 50, perWorkspace: 200, perTask: 20 } as const;

export const guestsRefused = 'guests cannot manage labels';

/** A label name: trimmed, 1 to 50 characters, no control characters. */
export function labelName(value: string | undefined): string {
  const name = (value ?? '').trim();
  if (name.length === 0) throw invalid('name is required');
  if ([...name].length > labelBounds.nameLength) throw invalid(`name must be at most ${labelBounds.nameLength} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw invalid('name must not contain control characters');
  return name;
}

/** A colour `#RRGGBB`, stored upper-case. */
export function labelColor(value: string | undefined): string {
  const color = (value ?? '').trim();
  if (!/^#[0-9A-Fa-f]{6}$/.test(color)) throw invalid('color must be #RRGGBB');
  return color.toUpperCase();
}

const alreadyExists = (): DomainError => new DomainError('already_exists', 'a label with this name already exists in the workspace');

async function actingMember(db: Queryable, acting: ActingPerson): Promise<string> {
  const workspaceId = pathId(acting.workspaceId, 'workspace');
  const member = await getMember(db, workspaceId, pathId(acting.userId, 'member'));
  if (!member) throw notFound('user is not a member of this workspace');
  if (member.role === 'guest') throw forbidden(guestsRefused);
  return workspaceId;
}

const noReferences = { statusId: null, listId: null, assigneeId: null, systemType: null };

/** The tasks as this transaction sees them now (with their labels). */
async function readTasks(db: Queryable, workspaceId: string, taskIds: readonly string[]): Promise<Task[]> {
  const read = await readTasksForChange(db, workspaceId, taskIds.map((id) => ({ id, refs: noReferences })));
  return read.flatMap((found) => (found ? [found.task] : []));
}

/** Writes one `task.updated` per task (its state as this transaction sees it now) into the outbox; returns the tasks. */
async function emitTaskUpdated(db: Queryable, workspaceId: string, taskIds: readonly string[]): Promise<Task[]> {
  if (taskIds.length === 0) return [];
  await store.touchTasks(db, workspaceId, taskIds);
  const tasks = await readTasks(db, workspaceId, taskIds);
  const at = new Date();
  const events = tasks.map((task) => {
    const { eventId, event, requestId, traceparent } = buildTaskEvent('task.updated', task, at);
    return { eventId, taskId: task.id, event, requestId, traceparent };
  });
  await store.insertTaskEvents(db, workspaceId, events);
  return tasks;
}

export async function listLabels(pool: Pool, acting: ActingPerson): Promise<store.LabelWithCount[]> {
  const workspaceId = await actingMember(pool, acting);
  return store.listLabels(pool, workspaceId, labelBounds.perWorkspace);
}

export async function createLabel(pool: Pool, acting: ActingPerson, input: { name: string; color: string }): Promise<Label> {
  const workspaceId = await actingMember(pool, acting);
  const name = labelName(input.name);
  const color = labelColor(input.color);
  try {
    return await inTransaction(pool, async (db) => {
      const count = await store.lockWorkspaceLabels(db, workspaceId);
      if (count >= labelBounds.perWorkspace) {
        throw new DomainError('failed_precondition', `a workspace has at most ${labelBounds.perWorkspace} labels`);
      }
      const label = await store.insertLabel(db, workspaceId, name, color);
      await recordAudit(db, { workspaceId, action: 'label.created', resourceType: 'label', resourceId: label.id });
      return label;
    });
  } catch (error) {
    if (isPgError(error, pgErrorCodes.uniqueViolation)) throw alreadyExists();
    throw error;
  }
}

/** Renames and/or recolours; every task carrying it gets `task.updated` when it effectively changed. */
export async function updateLabel(
  pool: Pool,
  acting: ActingPerson,
  id: string,
  input: { name?: string | undefined; color?: string | undefined },
): Promise<{ label: Label; tasksUpdated: number }> {
  const workspaceId = await actingMember(pool, acting);
  const labelId = pathId(id, 'label');
  const name = input.name === undefined ? undefined : labelName(input.name);
  const color = input.color === undefined ? undefined : labelColor(input.color);
  if (name === undefined && color === undefined) throw invalid('no fields to update');
  try {
    return await inTransaction(pool, async (db) => {
      const current = await store.lockLabel(db, workspaceId, labelId, 'update');
      if (!current) throw notFound('label not found');
      const nextName = name ?? current.name;
      const nextColor = color ?? current.color;
      if (nextName === current.name && nextColor.toUpperCase() === current.color.toUpperCase()) return { label: current, tasksUpdated: 0 };
      const tasks = await store.lockTasksCarrying(db, workspaceId, labelId);
      const label = await store.updateLabel(db, labelId, nextName, nextColor);
      const changes = [...(nextName !== current.name ? ['name'] : []), ...(nextColor.toUpperCase() !== current.color.toUpperCase() ? ['color'] : [])];
      await recordAudit(db, { workspaceId, action: 'label.updated', resourceType: 'label', resourceId: labelId.toLowerCase(), changes });
      await emitTaskUpdated(db, workspaceId, tasks);
      return { label, tasksUpdated: tasks.length };
    });
  } catch (error) {
    if (isPgError(error, pgErrorCodes.uniqueViolation)) throw alreadyExists();
    throw error;
  }
}

/** Deletes the label; it comes off every task carrying it, each of which gets `task.updated`. */
export async function deleteLabel(pool: Pool, acting: ActingPerson, id: string): Promise<{ tasksUpdated: number }> {
  const workspaceId = await actingMember(pool, acting);
  const labelId = pathId(id, 'label');
  return inTransaction(pool, async (db) => {
    if (!(await store.lockLabel(db, workspaceId, labelId, 'update'))) throw notFound('label not found');
    const tasks = await store.lockTasksCarrying(db, workspaceId, labelId);
    await store.deleteLabel(db, labelId);
    await recordAudit(db, { workspaceId, action: 'label.deleted', resourceType: 'label', resourceId: labelId.toLowerCase() });
    await emitTaskUpdated(db, workspaceId, tasks);
    return { tasksUpdated: tasks.length };
  });
}

export interface TaskLabelsChange {
  changed: boolean;
  taskNumber: number;
  taskPrefix: string;
  labels: Label[];
}

/** Puts a label on a task, or takes it off; a no-op (already on / not on) writes nothing. */
export async function changeTaskLabel(
  pool: Pool,
  acting: ActingPerson,
  change: { taskId: string; labelId: string; on: boolean },
): Promise<TaskLabelsChange> {
  const workspaceId = await actingMember(pool, acting);
  const taskId = pathId(change.taskId, 'task');
  const labelId = pathId(change.labelId, 'label');
  return inTransaction(pool, async (db) => {
    // The label first (then the task): the lock order of rename and delete.
    const label = await store.lockLabel(db, workspaceId, labelId, 'share');
    const task = await store.lockTaskForLabels(db, workspaceId, taskId);
    if (!task) throw notFound('task not found');
    if (!label) throw notFound('label not found');
    const carries = task.labelIds.includes(labelId);
    let changed = false;
    if (change.on && !carries) {
      if (task.labelIds.length >= labelBounds.perTask) {
        throw new DomainError('failed_precondition', `a task carries at most ${labelBounds.perTask} labels`);
      }
      await store.insertTaskLabel(db, taskId, labelId);
      changed = true;
    } else if (!change.on && carries) {
      await store.deleteTaskLabel(db, taskId, labelId);
      changed = true;
    }
    if (changed) await recordAudit(db, { workspaceId, action: 'task.updated', resourceType: 'task', resourceId: taskId.toLowerCase(), changes: ['labels'] });
    const [after] = changed ? await emitTaskUpdated(db, workspaceId, [taskId]) : await readTasks(db, workspaceId, [taskId]);
    return { changed, taskNumber: task.number, taskPrefix: task.prefix, labels: after?.labels ?? [] };
  });
}
