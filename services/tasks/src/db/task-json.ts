import type { Queryable } from './queryable.js';

/*
 * Read views rendered as the public API's JSON by Postgres itself (row_to_json / json_agg give
 * compact objects with the keys in the order written). The gateway sends the bytes as they are, so
 * these column aliases ARE the response shapes of contract section 2:
 *   Task:         id, number, name, isCompleted, description, listId, assigneeId, statusId, createdAt, projectId, labels
 *                 (below)
 *   TaskListItem: id, number, name, isCompleted, description, listId, assigneeId, statusId, order, createdAt
 *                 (rendered per row on write: migrations/005_task_list_json.sql)
 * `description` is the stored rich-text node array (NULL when empty); `createdAt` is ISO 8601 UTC
 * with milliseconds, as `Date.prototype.toISOString` writes it.
 */

const createdAt = `to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const commonFields = `t.id AS "id", t.number AS "number", t.name AS "name", t.is_completed AS "isCompleted",
  nullif(t.description, '[]'::jsonb) AS "description", t.section_id AS "listId",
  t.assignee_id AS "assigneeId", t.status_id AS "statusId"`;

const labelsOfTask = `coalesce((
    SELECT json_agg(label ORDER BY label.name, label.id)
    FROM (SELECT l.id AS "id", l.name AS "name", l.color AS "color"
          FROM task_labels tl JOIN labels l ON l.id = tl.label_id WHERE tl.task_id = t.id) label
  ), '[]'::json)`;

export interface TaskRef {
  workspaceId: string;
  id: string;
}

/**
 * Each task as single-task JSON, in the order asked, null where that workspace has no such task:
 * one query for the whole batch, each (workspace, id) pair matched as a pair.
 */
export async function renderTasks(db: Queryable, refs: readonly TaskRef[]): Promise<Array<string | null>> {
  if (refs.length === 0) return [];
  const { rows } = await db.query<{ ord: number; json: string }>({
    name: 'tasks-render-tasks',
    text: `SELECT ref.ord::int AS ord, row_to_json(v)::text AS json
           FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS ref (workspace_id, id, ord)
             JOIN tasks t ON t.workspace_id = ref.workspace_id AND t.id = ref.id,
             LATERAL (SELECT ${commonFields}, ${createdAt} AS "createdAt", t.project_id AS "projectId",
                             ${labelsOfTask} AS "labels") v`,
    values: [refs.map((ref) => ref.workspaceId), refs.map((ref) => ref.id)],
  });
  const rendered: Array<string | null> = refs.map(() => null);
  for (const row of rows) rendered[row.ord - 1] = row.json;
  return rendered;
}

export type RenderedTaskList = { version: string; json: string | null };

/**
 * The project's tasks as a JSON array in the list shape, ordered by section position, then task
 * position, then number, with the list's version (migration 006); `json` is null when the list is
 * still at `knownVersion`. Null when the workspace has no such project. One round trip, one snapshot.
 * Each element is the task's `list_json`, which a trigger renders on every write (migration 005).
 */
export async function renderTaskList(db: Queryable, workspaceId: string, projectId: string, knownVersion: string): Promise<RenderedTaskList | null> {
  const { rows } = await db.query<{ version: string; json: string | null }>({
    name: 'tasks-render-task-list',
    text: `SELECT p.list_version::text AS version,
             CASE WHEN p.list_version = $3::bigint THEN NULL ELSE '[' || coalesce((
               SELECT string_agg(t.list_json, ',' ORDER BY s.position, s.created_at, s.id, t.position, t.number)
               FROM tasks t JOIN sections s ON s.id = t.section_id
               WHERE t.workspace_id = p.workspace_id AND t.project_id = p.id
             ), '') || ']' END AS json
           FROM projects p
           WHERE p.workspace_id = $1 AND p.id = $2`,
    values: [workspaceId, projectId, knownVersion],
  });
  return rows[0] ?? null;
}
