import type { Queryable } from '@tws/common';
import type { RichTextNodes } from '../domain/model.js';

export interface CommentRow {
  id: string;
  authorName: string;
  authorUserId: string | null;
  createdAt: Date;
  body: RichTextNodes;
  /** Where the comment sits in the task's order: its creation time to the microsecond and its id. */
  position: CommentPosition;
}

/** A place in a task's comment order (creation time, then id): a page starts after one. */
export interface CommentPosition {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ`: microseconds, as Postgres stores it (a JS Date keeps only ms). */
  createdAt: string;
  id: string;
}

/**
 * Which comments of the task: the newest `count` (the task page), or the oldest `limit` after a
 * position (the public API's pages; from the first comment when `after` is null). Both are answered
 * oldest first.
 */
export type CommentWindow = { newest: number } | { after: CommentPosition | null; limit: number };

const statement = (direction: 'ASC' | 'DESC') => `WITH task AS (
    SELECT t.id FROM tasks t
    WHERE t.workspace_id = $1 AND t.id = $2
      AND ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM members m WHERE m.workspace_id = t.workspace_id AND m.user_id = $3::uuid))
  ),
  page AS (
    SELECT c.id, c.author_name, c.author_user_id, c.created_at, c.body
    FROM comments c JOIN task ON c.task_id = task.id
    WHERE $4::timestamptz IS NULL OR (c.created_at, c.id) > ($4::timestamptz, $5::uuid)
    ORDER BY c.created_at ${direction}, c.id ${direction}
    LIMIT $6
  )
  SELECT p.id, p.author_name, p.author_user_id, p.created_at, p.body,
         to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position
  FROM task LEFT JOIN page p ON true
  ORDER BY p.created_at, p.id`;

/**
 * The one comments query of the tasks context (TasksService.ListTaskComments and
 * TaskPageService.ListComments): a window of the comments of a task of the workspace, oldest first.
 * With `memberUserId` the task is read only when that user is a member of the workspace. Null when
 * there is no such task (or no such member): one statement, so both are the same answer.
 */
export async function listTaskComments(
  db: Queryable,
  input: { workspaceId: string; taskId: string; memberUserId: string | null; window: CommentWindow },
): Promise<CommentRow[] | null> {
  const { window } = input;
  const newest = 'newest' in window;
  const after = newest ? null : window.after;
  const { rows } = await db.query<{
    id: string | null;
    author_name: string | null;
    author_user_id: string | null;
    created_at: Date | null;
    body: RichTextNodes | null;
    position: string | null;
  }>({
    name: newest ? 'tasks-list-task-comments-newest' : 'tasks-list-task-comments-after',
    text: statement(newest ? 'DESC' : 'ASC'),
    values: [
      input.workspaceId,
      input.taskId,
      input.memberUserId,
      after?.createdAt ?? null,
      after?.id ?? null,
      newest ? window.newest : window.limit,
    ],
  });
  if (rows.length === 0) return null;
  return rows.flatMap((row) =>
    row.id === null || row.created_at === null || row.position === null
      ? []
      : [
          {
            id: row.id,
            authorName: row.author_name ?? '',
            authorUserId: row.author_user_id,
            createdAt: row.created_at,
            body: row.body ?? [],
            position: { createdAt: row.position, id: row.id },
          },
        ],
  );
}
