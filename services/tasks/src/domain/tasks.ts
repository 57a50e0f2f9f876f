import { DomainError, forbidden, inTransaction, invalid, notFound, type Pool } from '@tws/common';
import { getApiKeyName } from '../db/api-keys.js';
import { insertOutboxEvent } from '../db/outbox.js';
import { lockSection, projectExists, sectionInProject, takeTaskNumber } from '../db/projects.js';
import type { Queryable } from '../db/queryable.js';
import {
  deleteComment as deleteCommentRow,
  deleteTask as deleteTaskRow,
  getTask as getTaskRow,
  insertComment,
  insertTask,
  listTasks as listTaskRows,
  lockTask,
  nextPositionInSection,
  taskExists,
  updateTask as updateTaskRow,
} from '../db/tasks.js';
import { getMember, getStatus, getSystemStatus, releaseTaskSlot, takeTaskSlot } from '../db/workspaces.js';
import { buildTaskEvent, type TaskEventKind } from '../events/task-event.js';
import { commentBody, resolveDescription, type DescriptionInput } from './description.js';
import { freePlanLimits, type SystemType, type Task } from './model.js';
import { hasAnyField, planTaskUpdate, type ResolvedUpdate, type TaskState } from './task-update.js';
import { isUuid } from './identifiers.js';
import { pathId, referenceId, requiredText } from './validation.js';

async function emit(db: Queryable, kind: TaskEventKind, task: Task): Promise<void> {
  const { eventId, event } = buildTaskEvent(kind, task);
  await insertOutboxEvent(db, { eventId, workspaceId: task.workspaceId, event });
}

async function requireMember(db: Queryable, workspaceId: string, userId: string): Promise<string> {
  const id = referenceId(userId, 'assigneeId', 'is not a member of this workspace');
  if (!(await getMember(db, workspaceId, id))) throw invalid('assigneeId is not a member of this workspace');
  return id;
}

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

/**
 * A task at the end of its section, in the workspace's `todo` status, numbered by its project. One
 * transaction takes a plan slot (conditional counter on the workspace row), the project's next
 * number (counter on the project row), the section's next position (section row lock), inserts the
 * task and its `task.created` event.
 */
export async function createTask(
  pool: Pool,
  input: { workspaceId: string; projectId: string; listId: string; name: string; assigneeId?: string | undefined },
): Promise<{ id: string; number: number }> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const projectId = pathId(input.projectId, 'project');
  const name = requiredText(input.name, 'name');
  return inTransaction(pool, async (db) => {
    if (!(await projectExists(db, workspaceId, projectId))) throw notFound('project not found');
    const listId = referenceId(input.listId, 'listId', 'does not belong to projectId');
    if (!(await sectionInProject(db, projectId, listId))) throw invalid('listId does not belong to projectId');
    const assigneeId = input.assigneeId === undefined ? null : await requireMember(db, workspaceId, input.assigneeId);
    if (!(await takeTaskSlot(db, workspaceId, freePlanLimits.tasks))) {
      throw forbidden(`free plan limit reached: ${freePlanLimits.tasks} tasks`);
    }
    const number = await takeTaskNumber(db, workspaceId, projectId);
    if (number === null) throw notFound('project not found');
    if (!(await lockSection(db, projectId, listId))) throw invalid('listId does not belong to projectId');
    const position = await nextPositionInSection(db, listId);
    const todo = await getSystemStatus(db, workspaceId, 'todo');
    const task = await insertTask(db, {
      workspaceId,
      projectId,
      sectionId: listId,
      number,
      name,
      assigneeId,
      statusId: todo?.id ?? null,
      position,
    });
    await emit(db, 'task.created', task);
    return { id: task.id, number: task.number };
  });
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

/**
 * Applies a PATCH under the task's row lock; emits `task.completed` / `task.updated` for an
 * effective change and nothing for a no-op. Returns the task as it is afterwards.
 */
export async function updateTask(pool: Pool, input: UpdateTaskInput): Promise<Task> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const id = pathId(input.id, 'task');
  if (input.assigneeId !== undefined && input.clearAssignee) throw invalid('assigneeId and clearAssignee cannot both be set');
  // Input checks that need no database come first, so a bad request fails fast.
  const update: ResolvedUpdate = {};
  if (input.name !== undefined) update.name = requiredText(input.name, 'name');
  if (input.isCompleted !== undefined) update.isCompleted = input.isCompleted;
  if (input.description !== undefined) update.description = resolveDescription(input.description);
  if (input.clearAssignee) update.assigneeId = null;
  const anySent =
    hasAnyField(update) || input.listId !== undefined || input.statusId !== undefined || input.assigneeId !== undefined;
  if (!anySent) throw invalid('no fields to update');

  return inTransaction(pool, async (db) => {
    const current = await lockTask(db, workspaceId, id);
    if (!current) throw notFound('task not found');
    if (input.statusId !== undefined) {
      const status = await getStatus(db, workspaceId, referenceId(input.statusId, 'statusId', 'is not a status of this workspace'));
      if (!status) throw invalid('statusId is not a status of this workspace');
      update.status = { id: status.id, systemType: status.systemType };
    }
    if (input.listId !== undefined) {
      const listId = referenceId(input.listId, 'listId', "does not belong to the task's project");
      if (!(await sectionInProject(db, current.projectId, listId))) throw invalid("listId does not belong to the task's project");
      update.listId = listId;
    }
    if (input.assigneeId !== undefined) update.assigneeId = await requireMember(db, workspaceId, input.assigneeId);

    const systemIds: Partial<Record<SystemType, string>> = {};
    if (update.isCompleted !== undefined && update.status === undefined) {
      const type: SystemType = update.isCompleted ? 'done' : 'todo';
      const status = await getSystemStatus(db, workspaceId, type);
      if (!status) throw new DomainError('failed_precondition', `the workspace has no ${type} status`);
      systemIds[type] = status.id;
    }
    const state: TaskState = {
      name: current.name,
      listId: current.listId,
      isCompleted: current.isCompleted,
      statusId: current.statusId,
      assigneeId: current.assigneeId,
      description: current.description,
    };
    const plan = planTaskUpdate(state, update, (type) => systemIds[type]!);
    if (plan.event === null) return current;

    let position = current.order;
    if (plan.next.listId !== current.listId) {
      // A moved task goes to the end of its new section.
      await lockSection(db, current.projectId, plan.next.listId);
      position = await nextPositionInSection(db, plan.next.listId);
    }
    await updateTaskRow(db, id, { ...plan.next, sectionId: plan.next.listId, position });
    const updated: Task = { ...current, ...plan.next, order: position };
    await emit(db, plan.event, updated);
    return updated;
  });
}

/** Deletes a task and its comments and frees its plan slot; emits no event. */
export async function deleteTask(pool: Pool, workspaceId: string, id: string): Promise<void> {
  const ws = pathId(workspaceId, 'workspace');
  const taskId = pathId(id, 'task');
  await inTransaction(pool, async (db) => {
    if (!(await deleteTaskRow(db, ws, taskId))) throw notFound('task not found');
    await releaseTaskSlot(db, ws);
  });
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
