import type { RichTextNodes } from '../domain/model.js';
import type { Queryable } from '@tws/common';

/** The position after the last task of a section (the caller holds the section row lock). */
export async function nextPositionInSection(db: Queryable, sectionId: string): Promise<number> {
  const { rows } = await db.query<{ position: number }>({
    name: 'tasks-next-position',
    text: 'SELECT coalesce(max(position) + 1, 0) AS position FROM tasks WHERE section_id = $1',
    values: [sectionId],
  });
  return rows[0]!.position;
}

/**
 * Deletes the task (its comments and label links cascade) and frees its plan slot, in one statement;
 * false when the workspace has no such task.
 */
export async function deleteTask(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rows } = await db.query<{ deleted: number }>({
    name: 'tasks-delete-task',
    text: `WITH deleted AS (DELETE FROM tasks WHERE workspace_id = $1 AND id = $2 RETURNING workspace_id),
           released AS (
             UPDATE workspaces SET task_count = task_count - 1
             WHERE id = (SELECT workspace_id FROM deleted) AND task_count > 0
           )
           SELECT count(*)::int AS deleted FROM deleted`,
    values: [workspaceId, id],
  });
  return rows[0]!.deleted === 1;
}

export async function taskExists(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'tasks-task-exists',
    text: 'SELECT 1 FROM tasks WHERE workspace_id = $1 AND id = $2',
    values: [workspaceId, id],
  });
  return rowCount === 1;
}

export async function insertComment(
  db: Queryable,
  input: {
    workspaceId: string;
    taskId: string;
    body: RichTextNodes;
    authorApiKeyId: string | null;
    authorUserId: string | null;
    authorName: string;
  },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>({
    name: 'tasks-insert-comment',
    text: `INSERT INTO comments (workspace_id, task_id, body, author_api_key_id, author_user_id, author_name)
           VALUES ($1, $2, $3::jsonb, $4, $5, $6) RETURNING id`,
    values: [input.workspaceId, input.taskId, JSON.stringify(input.body), input.authorApiKeyId, input.authorUserId, input.authorName],
  });
  return rows[0]!.id;
}

export async function deleteComment(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'tasks-delete-comment',
    text: 'DELETE FROM comments WHERE workspace_id = $1 AND id = $2',
    values: [workspaceId, id],
  });
  return rowCount === 1;
}
