import type { Queryable } from '@tws/common';
import type { Project, RichTextNodes, Task } from '../domain/model.js';
import { taskColumns, taskOfRow, type TaskRow } from './task-row.js';

interface TaskByNumberRow extends TaskRow {
  project_name: string;
  project_description: string | null;
  task_prefix: string;
}

/**
 * A task by (workspace, project task prefix, number), read only when `userId` is a member of the
 * workspace: one statement, so "not a member" and "no such task" are the same empty answer.
 */
export async function readTaskByNumber(
  db: Queryable,
  input: { workspaceId: string; userId: string; taskPrefix: string; number: number },
): Promise<{ task: Task; project: Project } | null> {
  const { rows } = await db.query<TaskByNumberRow>({
    name: 'tasks-read-task-by-number',
    text: `SELECT ${taskColumns},
             p.name AS project_name, p.description AS project_description, p.task_prefix
           FROM members m
           JOIN projects p ON p.workspace_id = m.workspace_id AND p.task_prefix = $3
           JOIN tasks t ON t.project_id = p.id AND t.number = $4
           WHERE m.workspace_id = $1 AND m.user_id = $2`,
    values: [input.workspaceId, input.userId, input.taskPrefix, input.number],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    task: taskOfRow(row),
    project: { id: row.project_id, name: row.project_name, description: row.project_description, taskPrefix: row.task_prefix },
  };
}

export interface CommentRow {
  id: string;
  authorName: string;
  authorUserId: string | null;
  createdAt: Date;
  body: RichTextNodes;
}

/**
 * The newest `limit` comments of a task of the workspace, oldest first; null when the workspace has
 * no such task or `userId` is not a member of it (one statement: one answer for both).
 */
export async function listTaskComments(
  db: Queryable,
  input: { workspaceId: string; userId: string; taskId: string; limit: number },
): Promise<CommentRow[] | null> {
  const { rows } = await db.query<{
    task_found: boolean;
    id: string | null;
    author_name: string | null;
    author_user_id: string | null;
    created_at: Date | null;
    body: RichTextNodes | null;
  }>({
    name: 'tasks-list-task-comments',
    text: `WITH task AS (
             SELECT t.id FROM tasks t
             JOIN members m ON m.workspace_id = t.workspace_id AND m.user_id = $2
             WHERE t.workspace_id = $1 AND t.id = $3
           ),
           newest AS (
             SELECT c.id, c.author_name, c.author_user_id, c.created_at, c.body
             FROM comments c JOIN task ON c.task_id = task.id
             ORDER BY c.created_at DESC, c.id DESC
             LIMIT $4
           )
           SELECT true AS task_found, n.id, n.author_name, n.author_user_id, n.created_at, n.body
           FROM task LEFT JOIN newest n ON true
           ORDER BY n.created_at, n.id`,
    values: [input.workspaceId, input.userId, input.taskId, input.limit],
  });
  if (rows.length === 0) return null;
  return rows.flatMap((row) =>
    row.id === null
      ? []
      : [{ id: row.id, authorName: row.author_name ?? '', authorUserId: row.author_user_id, createdAt: row.created_at!, body: row.body ?? [] }],
  );
}
