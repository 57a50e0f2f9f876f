import { randomUUID } from 'node:crypto';
import { auditRecord, DomainError, forbidden, inTransaction, invalid, isPgError, notFound, pgErrorCodes, recordAudit, type Pool, type Queryable } from '@tws/common';
import { getApiKeyName } from '../store/api-keys.js';
import { projectExists, sectionInProject } from '../store/projects.js';
import {
  deleteComment as deleteCommentRow,
  deleteTask as deleteTaskRow,
  insertComment,
  taskExists,
} from '../store/tasks.js';
import { getMember } from '../store/workspaces.js';
import { buildTaskEvent } from './task-event.js';
import { commentBody } from './description.js';
import { freePlanLimits, type Task } from './model.js';
import { isUuid } from './identifiers.js';
import { pathId, requiredText } from './validation.js';
import { createInBatch } from './write-batches.js';

export { updateTask, type UpdateTaskInput } from './task-patch.js';

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
    updatedAt: createdAt,
    labels: [],
  };
  const { eventId, event, requestId, traceparent } = buildTaskEvent('task.created', draft, createdAt);
  const created = await createInBatch(
    pool,
    { workspaceId, projectId, sectionId: draft.listId },
    {
      id: draft.id,
      name,
      assigneeId: draft.assigneeId,
      createdAt,
      eventId,
      event,
      requestId,
      traceparent,
      audit: auditRecord({ workspaceId, action: 'task.created', resourceType: 'task', resourceId: draft.id }),
    },
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

/** Deletes a task and its comments and frees its plan slot; emits no event; audited. */
export async function deleteTask(pool: Pool, workspaceId: string, id: string): Promise<void> {
  const ws = pathId(workspaceId, 'workspace');
  const taskId = pathId(id, 'task');
  await inTransaction(pool, async (db) => {
    if (!(await deleteTaskRow(db, ws, taskId))) throw notFound('task not found');
    await recordAudit(db, { workspaceId: ws, action: 'task.deleted', resourceType: 'task', resourceId: taskId.toLowerCase() });
  });
}

export type Actor = { apiKeyId: string } | { userId: string };

/** A comment (markdown → rich text) attributed to the API key's name or the member's name. */
export async function createComment(
  pool: Pool,
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
    return await inTransaction(pool, async (db) => {
      const id = await insertComment(db, {
        workspaceId,
        taskId,
        body,
        authorApiKeyId: author.apiKeyId,
        authorUserId: author.userId,
        authorName: author.name,
      });
      await recordAudit(db, { workspaceId, action: 'comment.created', resourceType: 'comment', resourceId: id });
      return { id };
    });
  } catch (error) {
    // The task was deleted between the check and the insert.
    if (isPgError(error, pgErrorCodes.foreignKeyViolation)) throw notFound('task not found');
    throw error;
  }
}

export async function deleteComment(pool: Pool, workspaceId: string, id: string): Promise<void> {
  const ws = pathId(workspaceId, 'workspace');
  const commentId = pathId(id, 'comment');
  await inTransaction(pool, async (db) => {
    if (!(await deleteCommentRow(db, ws, commentId))) throw notFound('comment not found');
    await recordAudit(db, { workspaceId: ws, action: 'comment.deleted', resourceType: 'comment', resourceId: commentId.toLowerCase() });
  });
}
