import type { Queryable } from '@tws/common';

/*
 * Read views rendered as the public API's JSON by Postgres itself (row_to_json / json_agg give
 * compact objects with the keys in the order written). The gateway sends the bytes as they are, so
 * these column aliases ARE the response shapes of contract section 2:
 *   Task:         id, number, name, isCompleted, description, listId, assigneeId, statusId, createdAt, projectId, labels,
 *                 updatedAt (below)
 *   TaskListItem: id, number, name, isCompleted, description, listId, assigneeId, statusId, order, createdAt, updatedAt
 *                 (rendered per row on write: migrations/005_task_list_json.sql, 013)
 * `description` is the stored rich-text node array (NULL when empty); `createdAt` is ISO 8601 UTC
 * with milliseconds, as `Date.prototype.toISOString` writes it.
 */

const createdAt = `to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const updatedAt = `to_char(t.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const commonFields = `t.id AS "id", t.number AS "number", t.name AS "name", t.is_completed AS "isCompleted",
  nullif(t.description, '[]'::jsonb) AS "description", t.section_id AS "listId",
  t.assignee_id AS "assigneeId", t.status_id AS "statusId"`;

const labelsOfTask = `coalesce((
    SELECT json_agg(label ORDER BY label.name, label.id)
    FROM (SELECT l.id AS "id", l.name AS "name", l.color AS "color"
          FROM task_labels tl JOIN labels l ON l.id = tl.label_id WHERE tl.task_id = t.id) label
  ), '[]'::json)`;

const singleTaskFields = `${commonFields}, ${createdAt} AS "createdAt", t.project_id AS "projectId", ${labelsOfTask} AS "labels", ${updatedAt} AS "updatedAt"`;

/**
 * The single-task JSON of the row `t` as an expression: a write's RETURNING renders the task as it
 * left it with this, byte for byte what renderTasks (GET /v1/tasks/:id) would send of that version.
 */
export const singleTaskJsonOfT = `(SELECT row_to_json(v)::text FROM (SELECT ${singleTaskFields}) v)`;

export interface TaskRef {
  workspaceId: string;
  id: string;
}

/** A GetTasks answer stops after the task that takes it past this many bytes (its list JSON as the estimate). */
export const tasksAnswerBytes = 4 * 1024 * 1024;

/**
 * Each task as single-task JSON, in the order asked, null where that workspace has no such task,
 * undefined from the task on that would take the answer past `tasksAnswerBytes` (asked again):
 * one query for the whole batch, each (workspace, id) pair matched as a pair.
 */
export async function renderTasks(db: Queryable, refs: readonly TaskRef[]): Promise<Array<string | null | undefined>> {
  if (refs.length === 0) return [];
  const { rows } = await db.query<{ ord: number; json: string | null }>({
    name: 'tasks-render-tasks',
    text: `SELECT t.ord::int AS ord, CASE WHEN t.bytes_before < $3 THEN row_to_json(v)::text END AS json
           FROM (SELECT ref.ord, t.*,
                        sum(octet_length(t.list_json)) OVER (ORDER BY ref.ord) - octet_length(t.list_json) AS bytes_before
                 FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS ref (workspace_id, id, ord)
                   JOIN tasks t ON t.workspace_id = ref.workspace_id AND t.id = ref.id) t,
             LATERAL (SELECT ${singleTaskFields}) v`,
    values: [refs.map((ref) => ref.workspaceId), refs.map((ref) => ref.id), tasksAnswerBytes],
  });
  const rendered: Array<string | null | undefined> = refs.map(() => null);
  let deferredFrom = refs.length;
  for (const row of rows) {
    if (row.json === null) deferredFrom = Math.min(deferredFrom, row.ord - 1);
    else rendered[row.ord - 1] = row.json;
  }
  for (let index = deferredFrom; index < refs.length; index++) rendered[index] = undefined;
  return rendered;
}

export type RenderedTaskList = { version: string; json: string | null; nextOffset: number };

/**
 * A list over this many bytes of JSON is answered in pages of about this size (a page holds at least
 * one task, and a task's description is capped at 1 MiB of JSON): no message nears gRPC's 32 MiB, and
 * no process holds more than a page of a list, whatever the list's size.
 */
export const listPageBytes = 1024 * 1024;

const displayOrder = 's.position, s.created_at, s.id, t.position, t.number';

/**
 * The project's tasks as a JSON array in the list shape, ordered by section position, then task
 * position, then number, with the list's version (migration 006); `json` is null when the list is
 * still at `knownVersion`. Null when the workspace has no such project. One round trip, one snapshot.
 * Each element is the task's `list_json`, which a trigger renders on every write (migration 005).
 * A list over `listPageBytes` is not rendered here: its first page is (`renderTaskListPage`).
 */
export async function renderTaskList(db: Queryable, workspaceId: string, projectId: string, knownVersion: string): Promise<RenderedTaskList | null> {
  const { rows } = await db.query<{ version: string; json: string | null }>({
    name: 'tasks-render-task-list',
    text: `SELECT p.list_version::text AS version,
             CASE WHEN p.list_version = $3::bigint THEN NULL
               WHEN (SELECT coalesce(sum(octet_length(t.list_json)), 0) FROM tasks t
                     WHERE t.workspace_id = p.workspace_id AND t.project_id = p.id) > $4 THEN ''
               ELSE '[' || coalesce((
                 SELECT string_agg(t.list_json, ',' ORDER BY ${displayOrder})
                 FROM tasks t JOIN sections s ON s.id = t.section_id
                 WHERE t.workspace_id = p.workspace_id AND t.project_id = p.id
               ), '') || ']' END AS json
           FROM projects p
           WHERE p.workspace_id = $1 AND p.id = $2`,
    values: [workspaceId, projectId, knownVersion, listPageBytes],
  });
  const row = rows[0];
  if (row === undefined) return null;
  if (row.json === '') return renderTaskListPage(db, workspaceId, projectId, 0);
  return { version: row.version, json: row.json, nextOffset: 0 };
}

/**
 * The tasks after the first `offset` in display order, as a JSON array of about `listPageBytes`
 * (at least one task), with the list's version read in the same snapshot; `nextOffset` is 0 on the
 * last page. Null when the workspace has no such project.
 */
export async function renderTaskListPage(db: Queryable, workspaceId: string, projectId: string, offset: number): Promise<RenderedTaskList | null> {
  const { rows } = await db.query<{ version: string; json: string; last: number; total: number }>({
    name: 'tasks-render-task-list-page',
    text: `SELECT p.list_version::text AS version, page.json, page.last, page.total
           FROM projects p CROSS JOIN LATERAL (
             SELECT '[' || coalesce(string_agg(r.list_json, ',' ORDER BY r.ord), '') || ']' AS json,
                    coalesce(max(r.ord), 0)::int AS last, coalesce(max(r.total), 0)::int AS total
             FROM (
               SELECT w.list_json, w.ord, w.total, sum(octet_length(w.list_json)) OVER (ORDER BY w.ord) AS upto
               FROM (
                 SELECT t.list_json, row_number() OVER (ORDER BY ${displayOrder}) AS ord, count(*) OVER () AS total
                 FROM tasks t JOIN sections s ON s.id = t.section_id
                 WHERE t.workspace_id = p.workspace_id AND t.project_id = p.id
               ) w
               WHERE w.ord > $3
             ) r
             WHERE r.upto - octet_length(r.list_json) < $4
           ) page
           WHERE p.workspace_id = $1 AND p.id = $2`,
    values: [workspaceId, projectId, offset, listPageBytes],
  });
  const row = rows[0];
  if (row === undefined) return null;
  return { version: row.version, json: row.json, nextOffset: row.last < row.total ? row.last : 0 };
}
