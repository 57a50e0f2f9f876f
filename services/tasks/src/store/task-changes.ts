import type { RichTextNodes, SystemType, Task } from '../domain/model.js';
import { singleTaskJsonOfT } from './task-json.js';
import { taskColumns, taskOfRow, type TaskRow } from './task-row.js';
import type { TaskEvent } from '@tws/contracts';
import { auditInsertSql, auditRecordJson, auditRecordObject, type AuditRecord, type Queryable } from '@tws/common';

/** A task as read for a PATCH, with what the PATCH refers to resolved in the same statement. */
export interface TaskForChange {
  task: Task;
  /** The row version read; a write applies only while the row is still at this version. */
  version: string;
  /** The sent `statusId`'s status in the task's workspace (null: not sent or no such status). */
  status: { id: string; systemType: SystemType | null } | null;
  /** Whether the sent `listId` is a section of the task's project. */
  listInProject: boolean;
  /** Whether the sent `assigneeId` is a member of the task's workspace. */
  assigneeIsMember: boolean;
  /** The id of the workspace's status of the requested system type (null: none asked or none). */
  systemStatusId: string | null;
}

export interface ChangeReferences {
  /** Each null when not sent (or not a UUID: then it matches nothing). */
  statusId: string | null;
  listId: string | null;
  assigneeId: string | null;
  systemType: SystemType | null;
}

interface TaskForChangeRow extends TaskRow {
  version: string;
  ref_status_id: string | null;
  ref_status_type: SystemType | null;
  list_in_project: boolean;
  assignee_is_member: boolean;
  system_status_id: string | null;
}

// `xmin` (the id of the transaction that wrote this row version) is the row version: every UPDATE of
// the row, by any code path, changes it. `r` is the request: r.task_id, r.status_id, r.list_id,
// r.assignee_id, r.system_type.
const readForChangeColumns = `${taskColumns}, t.xmin::text AS version,
    s.id AS ref_status_id, s.system_type AS ref_status_type,
    EXISTS (SELECT 1 FROM sections WHERE project_id = t.project_id AND id = r.list_id) AS list_in_project,
    EXISTS (SELECT 1 FROM members WHERE workspace_id = t.workspace_id AND user_id = r.assignee_id) AS assignee_is_member,
    (SELECT id FROM statuses WHERE workspace_id = t.workspace_id AND system_type = r.system_type) AS system_status_id`;

const readTaskForChangeSql = `SELECT ${readForChangeColumns}
  FROM (SELECT $2::uuid AS task_id, $3::uuid AS status_id, $4::uuid AS list_id, $5::uuid AS assignee_id, $6::text AS system_type) r
  JOIN tasks t ON t.workspace_id = $1 AND t.id = r.task_id
  LEFT JOIN statuses s ON s.workspace_id = t.workspace_id AND s.id = r.status_id`;

const toTaskForChange = (row: TaskForChangeRow): TaskForChange => ({
  task: taskOfRow(row),
  version: row.version,
  status: row.ref_status_id === null ? null : { id: row.ref_status_id, systemType: row.ref_status_type },
  listInProject: row.list_in_project,
  assigneeIsMember: row.assignee_is_member,
  systemStatusId: row.system_status_id,
});

// A reference that was not sent is passed as a value that names no row rather than NULL: with a NULL
// parameter Postgres folds the lookup away in a custom plan, which then always looks cheaper than the
// generic plan, so the statement would be planned afresh on every execution.
const noUuid = '00000000-0000-0000-0000-000000000000';
const noSystemType = '';

/** Reads a task for a PATCH (and locks its row until commit when `lock`); null when there is none. */
export async function readTaskForChange(
  db: Queryable,
  workspaceId: string,
  id: string,
  refs: ChangeReferences,
  lock: boolean,
): Promise<TaskForChange | null> {
  const { rows } = await db.query<TaskForChangeRow>({
    name: lock ? 'tasks-read-task-for-change-locked' : 'tasks-read-task-for-change',
    text: lock ? `${readTaskForChangeSql} FOR NO KEY UPDATE OF t` : readTaskForChangeSql,
    values: [workspaceId, id, refs.statusId ?? noUuid, refs.listId ?? noUuid, refs.assigneeId ?? noUuid, refs.systemType ?? noSystemType],
  });
  return rows[0] ? toTaskForChange(rows[0]) : null;
}

/**
 * {@link readTaskForChange} (unlocked) for several PATCHes of one workspace in one statement; one
 * result per request, in order.
 */
export async function readTasksForChange(
  db: Queryable,
  workspaceId: string,
  requests: Array<{ id: string; refs: ChangeReferences }>,
): Promise<Array<TaskForChange | null>> {
  const { rows } = await db.query<TaskForChangeRow & { ord: string }>({
    name: 'tasks-read-tasks-for-change',
    text: `SELECT r.ord, ${readForChangeColumns}
           FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::text[])
             WITH ORDINALITY AS r(task_id, status_id, list_id, assignee_id, system_type, ord)
           JOIN tasks t ON t.workspace_id = $1 AND t.id = r.task_id
           LEFT JOIN statuses s ON s.workspace_id = t.workspace_id AND s.id = r.status_id`,
    values: [
      workspaceId,
      requests.map((request) => request.id),
      requests.map((request) => request.refs.statusId ?? noUuid),
      requests.map((request) => request.refs.listId ?? noUuid),
      requests.map((request) => request.refs.assigneeId ?? noUuid),
      requests.map((request) => request.refs.systemType ?? noSystemType),
    ],
  });
  const found = new Map(rows.map((row) => [Number(row.ord), toTaskForChange(row)]));
  return requests.map((_request, index) => found.get(index + 1) ?? null);
}

/** The state a PATCH writes (`description` only when it changed: it can be large). */
export interface TaskChange {
  name: string;
  sectionId: string;
  position: number;
  isCompleted: boolean;
  statusId: string | null;
  assigneeId: string | null;
  description: { value: RichTextNodes | null } | null;
}

export interface TaskWrite {
  id: string;
  workspaceId: string;
  /** The row version the change was planned on. */
  version: string;
  change: TaskChange;
  eventId: string;
  event: TaskEvent;
  /** The request that made the change (a Kafka header of the event). */
  requestId: string | null;
  /** The trace context of the call that made it (migration 016), when traced. */
  traceparent: string | null;
  /** Its audit row (migration 017), written by the same statement when the task is written. */
  audit: AuditRecord;
}

/** The new description as JSON text (null: cleared or unchanged). */
function descriptionJson(change: TaskChange): string | null {
  const value = change.description?.value ?? null;
  return value === null ? null : JSON.stringify(value);
}

/**
 * Writes a task's new state and its event in one statement, only if the row is still at `version`:
 * the task's single-task JSON as written (singleTaskJsonOfT), or null when it is not at that version
 * (someone changed the task since it was read: nothing was written).
 */
export async function writeTaskChange(db: Queryable, write: TaskWrite): Promise<string | null> {
  const { change, event } = write;
  const { rows } = await db.query<{ json: string }>({
    name: 'tasks-write-task-change',
    text: `WITH changed AS (
             UPDATE tasks t SET name = $3, section_id = $4, position = $5, is_completed = $6, status_id = $7, assignee_id = $8,
               description = CASE WHEN $9 THEN $10::jsonb ELSE t.description END, updated_at = now()
             WHERE t.id = $1 AND t.workspace_id = $14 AND t.xmin = $2::xid
             RETURNING t.id, ${singleTaskJsonOfT} AS json
           ),
           events AS (
             INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, workspace_id, created_at, request_id, traceparent)
             SELECT $11, 'task', changed.id::text, $12, $13::jsonb, $14, $15, $16, $17 FROM changed
           ),
           audit AS (${auditInsertSql('$18::jsonb', 'changed')})
           SELECT json FROM changed`,
    values: [
      write.id,
      write.version,
      change.name,
      change.sectionId,
      change.position,
      change.isCompleted,
      change.statusId,
      change.assigneeId,
      change.description !== null,
      descriptionJson(change),
      write.eventId,
      event.event,
      JSON.stringify(event),
      write.workspaceId,
      event.createdAt,
      write.requestId,
      write.traceparent,
      auditRecordJson(write.audit),
    ],
  });
  return rows[0]?.json ?? null;
}

/**
 * {@link writeTaskChange} for several tasks in one statement (one commit); one result per write, in
 * order. A second write of the same task in one call is not attempted (false): it was planned on the
 * same or an older version than the first.
 */
export async function writeTaskChanges(db: Queryable, writes: TaskWrite[]): Promise<Array<string | null>> {
  const sent: TaskWrite[] = [];
  const seen = new Set<string>();
  for (const write of writes) {
    if (seen.has(write.id)) continue;
    seen.add(write.id);
    sent.push(write);
  }
  // Rows in id order, so two such statements (of two replicas) lock shared rows in the same order.
  sent.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const { rows } = await db.query<{ id: string; json: string }>({
    name: 'tasks-write-task-changes',
    // One JSON parameter of the rows: as 18 arrays, the event payloads, audit records and descriptions
    // went as escaped text inside array literals, which pg escaped and Postgres parsed element by
    // element (a scratch Postgres, calls of 4 rows: this process 262-457 -> 125-252 µs a call, Postgres
    // 350-445 -> 275-350 µs; bench/HISTORY.md session 25).
    text: `WITH input AS (
             SELECT * FROM json_to_recordset($1::json)
               AS c(id uuid, workspace_id uuid, version text, name text, section_id uuid, position int, is_completed bool, status_id uuid,
                 assignee_id uuid, description_changed bool, description jsonb, event_id uuid, kind text, payload jsonb,
                 event_created_at timestamptz, request_id text, traceparent text, audit jsonb)
           ),
           changed AS (
             UPDATE tasks t SET name = c.name, section_id = c.section_id, position = c.position, is_completed = c.is_completed,
               status_id = c.status_id, assignee_id = c.assignee_id,
               description = CASE WHEN c.description_changed THEN c.description ELSE t.description END, updated_at = now()
             FROM input c
             WHERE t.id = c.id AND t.workspace_id = c.workspace_id AND t.xmin = c.version::xid
             RETURNING t.id, ${singleTaskJsonOfT} AS json
           ),
           events AS (
             INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, workspace_id, created_at, request_id, traceparent)
             SELECT c.event_id, 'task', c.id::text, c.kind, c.payload, c.workspace_id, c.event_created_at, c.request_id, c.traceparent
             FROM input c JOIN changed USING (id)
           ),
           audit AS (${auditInsertSql('c.audit', 'input c JOIN changed USING (id)')})
           SELECT id, json FROM changed`,
    values: [
      JSON.stringify(
        sent.map((write) => ({
          id: write.id,
          workspace_id: write.workspaceId,
          version: write.version,
          name: write.change.name,
          section_id: write.change.sectionId,
          position: write.change.position,
          is_completed: write.change.isCompleted,
          status_id: write.change.statusId,
          assignee_id: write.change.assigneeId,
          description_changed: write.change.description !== null,
          // JSON null is SQL NULL here (a cleared description), as the array's NULL element was.
          description: write.change.description?.value ?? null,
          event_id: write.eventId,
          kind: write.event.event,
          payload: write.event,
          event_created_at: write.event.createdAt,
          request_id: write.requestId,
          traceparent: write.traceparent,
          audit: auditRecordObject(write.audit),
        })),
      ),
    ],
  });
  const written = new Map(rows.map((row) => [row.id, row.json]));
  return writes.map((write) => (sent.includes(write) ? (written.get(write.id) ?? null) : null));
}

/**
 * Up to `limit` tasks assigned to a member, locked until commit, in id order (so two such statements
 * lock shared rows in the same order): member removal unassigns them through writeTaskChanges.
 */
export async function lockTasksAssignedTo(db: Queryable, workspaceId: string, userId: string, limit: number): Promise<TaskForChange[]> {
  const { rows } = await db.query<TaskForChangeRow>({
    name: 'tasks-lock-tasks-assigned-to',
    text: `SELECT ${readForChangeColumns}
           FROM (SELECT $3::uuid AS status_id, $3::uuid AS list_id, $3::uuid AS assignee_id, $4::text AS system_type) r
           JOIN tasks t ON t.workspace_id = $1 AND t.assignee_id = $2
           LEFT JOIN statuses s ON s.workspace_id = t.workspace_id AND s.id = r.status_id
           ORDER BY t.id LIMIT $5 FOR NO KEY UPDATE OF t`,
    values: [workspaceId, userId, noUuid, noSystemType, limit],
  });
  return rows.map(toTaskForChange);
}
