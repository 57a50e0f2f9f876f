import { invalid, notFound, type Queryable } from '@tws/common';
import { listTaskComments, type CommentPosition, type CommentRow } from '../store/comments.js';
import { isUuid } from './identifiers.js';
import { pathId } from './validation.js';

/** The most comments one page of the public API lists (GET /v1/tasks/:id/comments `limit`). */
export type { CommentRow };

/** The most comments one page of the public API lists (GET /v1/tasks/:id/comments `limit`). */
export const maxCommentsPerPage = 200;

const positionPattern = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)~([0-9a-f-]{36})$/;
const cursorPattern = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * A page cursor: the position of the last comment of the previous page, base64url. Opaque to clients;
 * it stays valid when that comment is deleted (the next page starts after where it was).
 */
export function encodeCursor(position: CommentPosition): string {
  return Buffer.from(`${position.createdAt}~${position.id}`, 'utf8').toString('base64url');
}

/** A real instant: the milliseconds part survives a round trip through Date (no 30 February). */
function isInstant(text: string): boolean {
  const ms = Date.parse(text);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 23) === text.slice(0, 23);
}

export function decodeCursor(cursor: string): CommentPosition {
  const match = cursorPattern.test(cursor) ? positionPattern.exec(Buffer.from(cursor, 'base64url').toString('utf8')) : null;
  if (!match || !isUuid(match[2]!) || !isInstant(match[1]!)) throw invalid('cursor is not valid: pass the nextCursor of the previous page');
  return { createdAt: match[1]!, id: match[2]! };
}

/**
 * One page of a task's comments, oldest first (creation time, then id), for the workspace's own
 * credentials (the gateway checked the caller's membership). NOT_FOUND when the workspace has no
 * such task; `nextCursor` null on the last page.
 */
export async function listCommentsPage(
  db: Queryable,
  input: { workspaceId: string; taskId: string; limit: number; cursor: string },
): Promise<{ comments: CommentRow[]; nextCursor: string | null }> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const taskId = pathId(input.taskId, 'task');
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > maxCommentsPerPage) {
    throw invalid(`limit must be an integer from 1 to ${maxCommentsPerPage}`);
  }
  const after = input.cursor === '' ? null : decodeCursor(input.cursor);
  // One more than asked says whether a next page exists.
  const rows = await listTaskComments(db, { workspaceId, taskId, memberUserId: null, window: { after, limit: input.limit + 1 } });
  if (rows === null) throw notFound('task not found');
  if (rows.length <= input.limit) return { comments: rows, nextCursor: null };
  const comments = rows.slice(0, input.limit);
  return { comments, nextCursor: encodeCursor(comments[comments.length - 1]!.position) };
}
