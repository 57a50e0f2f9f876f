import type { Label, RichTextNodes, Task } from '../domain/model.js';
import type { Queryable } from './queryable.js';

interface TaskRow {
  id: string;
  workspace_id: string;
  number: number;
  name: string;
  is_completed: boolean;
  description: RichTextNodes | null;
  section_id: string;
  project_id: string;
  assignee_id: string | null;
  status_id: string | null;
  position: number;
  created_at: Date;
  labels?: Label[];
}

const toTask = (row: TaskRow): Task => ({
  id: row.id,
  workspaceId: row.workspace_id,
  number: row.number,
  name: row.name,
  isCompleted: row.is_completed,
  description: row.description,
  listId: row.section_id,
  projectId: row.project_id,
  assigneeId: row.assignee_id,
  statusId: row.status_id,
  order: row.position,
  createdAt: row.created_at,
  labels: row.labels ?? [],
});

const taskColumns = (alias: string): string =>
  ['id', 'workspace_id', 'number', 'name', 'is_completed', 'description', 'section_id', 'project_id', 'assignee_id', 'status_id', 'position', 'created_at']
    .map((column) => `${alias}.${column}`)
    .join(', ');

/** The task's labels as a JSON array (empty when it has none). */
const labelsOf = (alias: string): string => `coalesce((
    SELECT json_agg(json_build_object('id', l.id, 'name', l.name, 'color', l.color) ORDER BY l.name, l.id)
    FROM task_labels tl JOIN labels l ON l.id = tl.label_id WHERE tl.task_id = ${alias}.id
  ), '[]'::json) AS labels`;

export async function getTask(db: Queryable, workspaceId: string, id: string): Promise<Task | null> {
  const { rows } = await db.query<TaskRow>({
    name: 'tasks-get-task',
    text: `SELECT ${taskColumns('t')}, ${labelsOf('t')} FROM tasks t WHERE t.workspace_id = $1 AND t.id = $2`,
    values: [workspaceId, id],
  });
  return rows[0] ? toTask(rows[0]) : null;
}

/** Tasks of a project by section position, then task position, then number. */
export async function listTasks(db: Queryable, workspaceId: string, projectId: string): Promise<Task[]> {
  const { rows } = await db.query<TaskRow>({
    name: 'tasks-list-tasks',
    text: `SELECT ${taskColumns('t')}, ${labelsOf('t')}
           FROM tasks t JOIN sections s ON s.id = t.section_id
           WHERE t.workspace_id = $1 AND t.project_id = $2
           ORDER BY s.position, s.created_at, s.id, t.position, t.number`,
    values: [workspaceId, projectId],
  });
  return rows.map(toTask);
}

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
