import { notFound, type Queryable } from '@tws/common';
import { listTaskComments, type CommentRow } from '../store/comments.js';
import { readTaskByNumber } from '../store/task-page.js';
import type { ActingPerson } from './api-key-settings.js';
import type { Project, Task } from './model.js';
import { isUuid } from './identifiers.js';

/**
 * The task page of a signed-in person (TaskPageService, called by services/web). Owners, members
 * and guests may read a task and its comments. Someone who is not a member of the workspace, a
 * malformed reference and a task that does not exist all answer the same NOT_FOUND, so an address
 * reveals nothing.
 */

/** The most comments one page lists (the newest; the answer says when there are more). */
export const maxListedComments = 200;
const maxTaskNumber = 2_147_483_647;

const taskNotFound = () => notFound('task not found');

/** Upper-case letters and digits, starting with a letter, as project prefixes are made. */
const prefixPattern = /^[A-Z][A-Z0-9]{0,19}$/;

function actingIds(acting: ActingPerson): { workspaceId: string; userId: string } {
  if (!isUuid(acting.workspaceId) || !isUuid(acting.userId)) throw taskNotFound();
  return { workspaceId: acting.workspaceId.toLowerCase(), userId: acting.userId.toLowerCase() };
}

export async function getTaskByNumber(
  db: Queryable,
  acting: ActingPerson,
  taskPrefix: string,
  number: number,
): Promise<{ task: Task; project: Project }> {
  const ids = actingIds(acting);
  const prefix = taskPrefix.toUpperCase();
  if (!prefixPattern.test(prefix) || !Number.isInteger(number) || number < 1 || number > maxTaskNumber) throw taskNotFound();
  const found = await readTaskByNumber(db, { ...ids, taskPrefix: prefix, number });
  if (!found) throw taskNotFound();
  return found;
}

export async function listComments(db: Queryable, acting: ActingPerson, taskId: string): Promise<{ comments: CommentRow[]; truncated: boolean }> {
  const ids = actingIds(acting);
  if (!isUuid(taskId)) throw taskNotFound();
  const rows = await listTaskComments(db, {
    workspaceId: ids.workspaceId,
    taskId: taskId.toLowerCase(),
    memberUserId: ids.userId,
    window: { newest: maxListedComments + 1 },
  });
  if (rows === null) throw taskNotFound();
  // One more than listed was read: the oldest of them is dropped, and says there are more.
  return rows.length > maxListedComments ? { comments: rows.slice(1), truncated: true } : { comments: rows, truncated: false };
}
