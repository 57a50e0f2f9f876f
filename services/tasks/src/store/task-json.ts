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

/**
 * A task list read: `json` is null when it is still at the version asked about (not modified) or
 * when it is `streamed` (too large for one message: read it with store/task-list-stream.ts).
 */
export type RenderedTaskList = { version: string; json: string | null; streamed: boolean };

/**
 * Most bytes of list JSON answered in one message (and so copied by each hop); a larger list is
 * streamed in chunks. A task's description is capped at 1 MiB of JSON, so no message nears gRPC's
 * 32 MiB and no process holds more than a chunk or two of a list, whatever the list's size.
 */
export const listPageBytes = 1024 * 1024;

/**
 * Most tasks in a list answered in one message. The size check reads at most this many + 1 rows,
 * so it costs the same for 5,000 tasks as for 50,000 (a task's list JSON is ~300 bytes at least,
 * so this many tasks are over `listPageBytes` anyway).
 */
export const maxOneMessageTasks = 4000;

export const displayOrder = 's.position, s.created_at, s.id, t.position, t.number';

/**
 * The project's tasks as a JSON array in the list shape, ordered by section position, then task
 * position, then number, with the list's version (migration 006); `json` is null when the list is
 * still at `knownVersion`. Null when the workspace has no such project. One round trip, one snapshot.
 * Each element is the task's `list_json`, which a trigger renders on every write (migration 005).
 * A list over `listPageBytes` or `maxOneMessageTasks` is not rendered here: it is `streamed`.
 */
export async function renderTaskList(db: Queryable, workspaceId: string, projectId: string, knownVersion: string): Promise<RenderedTaskList | null> {
  const { rows } = await db.query<{ version: string; json: string | null }>({
    name: 'tasks-render-task-list',
    text: `SELECT p.list_version::text AS version,
             CASE WHEN p.list_version = $3::bigint THEN NULL
               WHEN (SELECT count(*) > $5 OR coalesce(sum(b.bytes), 0) > $4
                     FROM (SELECT octet_length(t.list_json) AS bytes FROM tasks t WHERE t.project_id = p.id LIMIT $5 + 1) b) THEN ''
               ELSE '[' || coalesce((
                 SELECT string_agg(t.list_json, ',' ORDER BY ${displayOrder})
                 FROM tasks t JOIN sections s ON s.id = t.section_id
                 WHERE t.workspace_id = p.workspace_id AND t.project_id = p.id
               ), '') || ']' END AS json
           FROM projects p
           WHERE p.workspace_id = $1 AND p.id = $2`,
    values: [workspaceId, projectId, knownVersion, listPageBytes, maxOneMessageTasks],
  });
  const row = rows[0];
  if (row === undefined) return null;
  if (row.json === '') return { version: row.version, json: null, streamed: true };
  return { version: row.version, json: row.json, streamed: false };
}
