import { randomUUID } from 'node:crypto';
import { DomainError, forbidden, inTransaction, invalid, notFound, type Pool } from '@tws/common';
import { getApiKeyName } from '../db/api-keys.js';
import { lockSection, projectExists, sectionInProject } from '../db/projects.js';
import type { Queryable } from '../db/queryable.js';
import { readTaskForChange, writeTaskChange, type ChangeReferences, type TaskForChange, type TaskWrite } from '../db/task-changes.js';
import {
  deleteComment as deleteCommentRow,
  deleteTask as deleteTaskRow,
  getTask as getTaskRow,
  insertComment,
  listTasks as listTaskRows,
  nextPositionInSection,
  taskExists,
} from '../db/tasks.js';
import { getMember } from '../db/workspaces.js';
import { buildTaskEvent } from '../events/task-event.js';
import { commentBody, resolveDescription, type DescriptionInput } from './description.js';
import { freePlanLimits, type Task } from './model.js';
import { hasAnyField, planTaskUpdate, type ResolvedUpdate, type TaskState, type UpdatePlan } from './task-update.js';
import { isUuid } from './identifiers.js';
import { pathId, requiredText } from './validation.js';
import { createInBatch, writeInBatch } from './write-batches.js';

export async function getTask(pool: Queryable, workspaceId: string, id: string): Promise<Task> {
  const task = await getTaskRow(pool, pathId(workspaceId, 'workspace'), pathId(id, 'task'));
  if (!task) throw notFound('task not found');
  return task;
}

export async function listTasks(pool: Queryable, workspaceId: string, projectId: string): Promise<Task[]> {
  const ws = pathId(workspaceId, 'workspace');
  const project = pathId(projectId, 'project');
  const tasks = await listTaskRows(pool, ws, project);
  if (tasks.length === 0 && !(await projectExists(pool, ws, project))) throw notFound('project not found');
  return tasks;
}

/** A malformed `listId` or `assigneeId`: the answer `create_tasks` gives for an unknown one, in its order. */
async function rejectMalformedReference(db: Queryable, workspaceId: string, projectId: string, listId: string): Promise<never> {
  if (!(await projectExists(db, workspaceId, projectId))) throw notFound('project not found');
  if (!isUuid(listId) || !(await sectionInProject(db, projectId, listId))) throw invalid('listId does not belong to projectId');
  throw invalid('assigneeId is not a member of this workspace');
}

/**
 * A task at the end of its section, in the workspace's `todo` status, numbered by its project, with
 * its `task.created` event. `create_tasks` takes the section's position, a plan slot and the
 * project's next number under row locks held only for its own run; concurrent creations in one
 * section share a call (createInBatch).
 */
export async function createTask(
  pool: Pool,
  input: { workspaceId: string; projectId: string; listId: string; name: string; assigneeId?: string | undefined },
): Promise<{ id: string; number: number }> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const projectId = pathId(input.projectId, 'project');
  const name = requiredText(input.name, 'name');
  const { listId, assigneeId } = input;
  if (!isUuid(listId) || (assigneeId !== undefined && !isUuid(assigneeId))) {
    return rejectMalformedReference(pool, workspaceId, projectId, listId);
  }
  const createdAt = new Date();
  const draft: Task = {
    id: randomUUID(),
    workspaceId,
    // Number and status are filled into the event by create_tasks.
    number: 0,
    name,
    isCompleted: false,
    description: null,
    listId: listId.toLowerCase(),
    projectId,
    assigneeId: assigneeId?.toLowerCase() ?? null,
    statusId: null,
    order: 0,
    createdAt,
    labels: [],
  };
  const { eventId, event } = buildTaskEvent('task.created', draft, createdAt);
  const created = await createInBatch(
    pool,
    { workspaceId, projectId, sectionId: draft.listId },
    { id: draft.id, name, assigneeId: draft.assigneeId, createdAt, eventId, event },
  );
  switch (created.outcome) {
    case 'created':
      return { id: draft.id, number: created.number };
    case 'project_not_found':
      throw notFound('project not found');
    case 'section_not_in_project':
      throw invalid('listId does not belong to projectId');
    case 'assignee_not_member':
      throw invalid('assigneeId is not a member of this workspace');
    case 'plan_limit':
      throw forbidden(`free plan limit reached: ${freePlanLimits.tasks} tasks`);
  }
}

export interface UpdateTaskInput {
  workspaceId: string;
  id: string;
  name?: string | undefined;
  listId?: string | undefined;
  isCompleted?: boolean | undefined;
  statusId?: string | undefined;
  assigneeId?: string | undefined;
  clearAssignee: boolean;
  description?: DescriptionInput | undefined;
}

/** A sent reference id in lower case; null when it is not a UUID (it then matches no row). */
const lookupId = (value: string | undefined): string | null => (isUuid(value) ? value.toLowerCase() : null);

/**
 * The update the PATCH makes to the task as read, with its references checked (in the order the
 * API has always answered them); throws for an invalid reference.
 */
function planChange(read: TaskForChange, input: UpdateTaskInput, fields: ResolvedUpdate, refs: ChangeReferences): UpdatePlan {
  const update: ResolvedUpdate = { ...fields };
  if (input.statusId !== undefined) {
    if (!read.status) throw invalid('statusId is not a status of this workspace');
    update.status = read.status;
  }
  if (input.listId !== undefined) {
    if (refs.listId === null || !read.listInProject) throw invalid("listId does not belong to the task's project");
    update.listId = refs.listId;
  }
  if (input.assigneeId !== undefined) {
    if (refs.assigneeId === null || !read.assigneeIsMember) throw invalid('assigneeId is not a member of this workspace');
    update.assigneeId = refs.assigneeId;
  }
  if (refs.systemType !== null && read.systemStatusId === null) {
    throw new DomainError('failed_precondition', `the workspace has no ${refs.systemType} status`);
  }
  const { task } = read;
  const state: TaskState = {
    name: task.name,
    listId: task.listId,
    isCompleted: task.isCompleted,
    statusId: task.statusId,
    assigneeId: task.assigneeId,
    description: task.description,
  };
  return planTaskUpdate(state, update, () => read.systemStatusId!);
}

/** Writes the planned change and its event if the row is still as read; the task afterwards, or null. */
async function applyChange(
  write: (change: TaskWrite) => Promise<boolean>,
  read: TaskForChange,
  plan: UpdatePlan,
  position: number,
): Promise<Task | null> {
  const updated: Task = { ...read.task, ...plan.next, order: position };
  const { eventId, event } = buildTaskEvent(plan.event!, updated);
  const written = await write({
    id: updated.id,
    workspaceId: updated.workspaceId,
    version: read.version,
    change: {
      name: updated.name,
      sectionId: updated.listId,
      position,
      isCompleted: updated.isCompleted,
      statusId: updated.statusId,
      assigneeId: updated.assigneeId,
      description: plan.changed.includes('description') ? { value: updated.description } : null,
    },
    eventId,
    event,
  });
  return written ? updated : null;
}

/**
 * Applies a PATCH; emits `task.completed` / `task.updated` for an effective change and nothing for
 * a no-op. Returns the task as it is afterwards.
 *
 * Optimistic first: one read (task and references), one conditional write (task and event) that
 * applies only if the row is unchanged since the read (concurrent writes of a workspace share one
 * statement: writeInBatch); no transaction, no lock held across round trips. A move (its position is the end of the target section, which needs that section's lock)
 * or a task changed concurrently takes the locked path: row lock, then section lock.
 */
export async function updateTask(pool: Pool, input: UpdateTaskInput): Promise<Task> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const id = pathId(input.id, 'task');
  if (input.assigneeId !== undefined && input.clearAssignee) throw invalid('assigneeId and clearAssignee cannot both be set');
  // Input checks that need no database come first, so a bad request fails fast.
  const fields: ResolvedUpdate = {};
  if (input.name !== undefined) fields.name = requiredText(input.name, 'name');
  if (input.isCompleted !== undefined) fields.isCompleted = input.isCompleted;
  if (input.description !== undefined) fields.description = resolveDescription(input.description);
  if (input.clearAssignee) fields.assigneeId = null;
  const anySent =
    hasAnyField(fields) || input.listId !== undefined || input.statusId !== undefined || input.assigneeId !== undefined;
  if (!anySent) throw invalid('no fields to update');
  const refs: ChangeReferences = {
    statusId: lookupId(input.statusId),
    listId: lookupId(input.listId),
    assigneeId: lookupId(input.assigneeId),
    // The system status isCompleted selects, when no status is sent.
    systemType: input.isCompleted === undefined || input.statusId !== undefined ? null : input.isCompleted ? 'done' : 'todo',
  };
  const read = async (db: Queryable, lock: boolean): Promise<{ current: TaskForChange; plan: UpdatePlan }> => {
    const current = await readTaskForChange(db, workspaceId, id, refs, lock);
    if (!current) throw notFound('task not found');
    return { current, plan: planChange(current, input, fields, refs) };
  };

  const first = await read(pool, false);
  if (first.plan.event === null) return first.current.task;
  if (first.plan.next.listId === first.current.task.listId) {
    const updated = await applyChange((change) => writeInBatch(pool, change), first.current, first.plan, first.current.task.order);
    if (updated) return updated;
  }
  return inTransaction(pool, async (db) => {
    const { current, plan } = await read(db, true);
    if (plan.event === null) return current.task;
    let position = current.task.order;
    if (plan.next.listId !== current.task.listId) {
      // A moved task goes to the end of its new section.
      await lockSection(db, current.task.projectId, plan.next.listId);
      position = await nextPositionInSection(db, plan.next.listId);
    }
    const updated = await applyChange((change) => writeTaskChange(db, change), current, plan, position);
    if (!updated) throw new Error('the locked task row changed');
    return updated;
  });
}

/** Deletes a task and its comments and frees its plan slot; emits no event. */
export async function deleteTask(pool: Queryable, workspaceId: string, id: string): Promise<void> {
  if (!(await deleteTaskRow(pool, pathId(workspaceId, 'workspace'), pathId(id, 'task')))) throw notFound('task not found');
}

export type Actor = { apiKeyId: string } | { userId: string };

/** A comment (markdown → rich text) attributed to the API key's name or the member's name. */
export async function createComment(
  pool: Queryable,
  input: { workspaceId: string; taskId: string; text: string; actor: Actor | undefined },
): Promise<{ id: string }> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const taskId = pathId(input.taskId, 'task');
  const body = commentBody(input.text);
  if (!input.actor) throw invalid('actor is required');
  if (!(await taskExists(pool, workspaceId, taskId))) throw notFound('task not found');
  let author: { apiKeyId: string | null; userId: string | null; name: string };
  if ('apiKeyId' in input.actor) {
    const keyId = input.actor.apiKeyId;
    const name = isUuid(keyId) ? await getApiKeyName(pool, workspaceId, keyId) : null;
    if (name === null) throw new DomainError('unauthenticated', 'invalid API key');
    author = { apiKeyId: keyId, userId: null, name };
  } else {
    const userId = input.actor.userId;
    const member = isUuid(userId) ? await getMember(pool, workspaceId, userId) : null;
    if (!member) throw forbidden('not a member of this workspace');
    author = { apiKeyId: null, userId: member.userId, name: member.name };
  }
  try {
    const id = await insertComment(pool, {
      workspaceId,
      taskId,
      body,
      authorApiKeyId: author.apiKeyId,
      authorUserId: author.userId,
      authorName: author.name,
    });
    return { id };
  } catch (error) {
    // The task was deleted between the check and the insert.
    if (typeof error === 'object' && error !== null && (error as { code?: string }).code === '23503') throw notFound('task not found');
    throw error;
  }
}

export async function deleteComment(pool: Queryable, workspaceId: string, id: string): Promise<void> {
  if (!(await deleteCommentRow(pool, pathId(workspaceId, 'workspace'), pathId(id, 'comment')))) throw notFound('comment not found');
}
