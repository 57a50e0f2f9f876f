import type { Queryable } from '@tws/common';
import type { TaskEvent } from '@tws/contracts';
import type { Label } from '../domain/model.js';

/*
 * The workspace's labels (tables of migration 002, name index of 008) and the labels on its tasks.
 * Lock order, so two of these transactions never wait on each other in a cycle: the workspace's
 * label advisory lock (creating), then a label row, then task rows in id order.
 */

export interface LabelWithCount extends Label {
  taskCount: number;
}

/** The workspace's labels by name (case-insensitive), each with how many tasks carry it; at most `limit`. */
export async function listLabels(db: Queryable, workspaceId: string, limit: number): Promise<LabelWithCount[]> {
  const { rows } = await db.query<LabelWithCount>({
    name: 'labels-list',
    text: `SELECT l.id, l.name, l.color, (SELECT count(*) FROM task_labels tl WHERE tl.label_id = l.id)::int AS "taskCount"
           FROM labels l WHERE l.workspace_id = $1 ORDER BY lower(l.name), l.id LIMIT $2`,
    values: [workspaceId, limit],
  });
  return rows;
}

/**
 * Serialises label creation in one workspace until commit (so the per-workspace bound holds under
 * concurrency), then counts its labels.
 */
export async function lockWorkspaceLabels(db: Queryable, workspaceId: string): Promise<number> {
  await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`tasks:labels:${workspaceId}`]);
  const { rows } = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM labels WHERE workspace_id = $1', [workspaceId]);
  return rows[0]?.count ?? 0;
}

export async function insertLabel(db: Queryable, workspaceId: string, name: string, color: string): Promise<Label> {
  const { rows } = await db.query<Label>(
    'INSERT INTO labels (workspace_id, name, color) VALUES ($1, $2, $3) RETURNING id, name, color',
    [workspaceId, name, color],
  );
  const label = rows[0];
  if (!label) throw new Error('INSERT INTO labels returned no row');
  return label;
}

/**
 * The workspace's label, locked until commit: `update` (rename, recolour, delete) excludes adding it
 * to a task meanwhile; `share` (adding it to a task) excludes only those. Null when there is none.
 */
export async function lockLabel(db: Queryable, workspaceId: string, id: string, mode: 'update' | 'share'): Promise<Label | null> {
  const { rows } = await db.query<Label>({
    name: `labels-lock-${mode}`,
    text: `SELECT id, name, color FROM labels WHERE workspace_id = $1 AND id = $2 ${mode === 'update' ? 'FOR UPDATE' : 'FOR KEY SHARE'}`,
    values: [workspaceId, id],
  });
  return rows[0] ?? null;
}

/** The ids of the tasks carrying the label, locked (in id order) until commit. */
export async function lockTasksCarrying(db: Queryable, workspaceId: string, labelId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>({
    name: 'labels-lock-tasks-carrying',
    text: `SELECT t.id FROM tasks t JOIN task_labels tl ON tl.task_id = t.id
           WHERE tl.label_id = $2 AND t.workspace_id = $1 ORDER BY t.id FOR NO KEY UPDATE OF t`,
    values: [workspaceId, labelId],
  });
  return rows.map((row) => row.id);
}

export async function updateLabel(db: Queryable, id: string, name: string, color: string): Promise<Label> {
  const { rows } = await db.query<Label>('UPDATE labels SET name = $2, color = $3 WHERE id = $1 RETURNING id, name, color', [id, name, color]);
  const label = rows[0];
  if (!label) throw new Error('the locked label is gone');
  return label;
}

/** Deletes the label; it comes off every task with it (ON DELETE CASCADE of task_labels). */
export async function deleteLabel(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM labels WHERE id = $1', [id]);
}

export interface TaskForLabels {
  id: string;
  number: number;
  /** The task's project's prefix (the task URL's `taskPrefix`). */
  prefix: string;
  labelIds: string[];
}

/** The workspace's task, locked until commit, with the ids of its labels; null when there is none. */
export async function lockTaskForLabels(db: Queryable, workspaceId: string, id: string): Promise<TaskForLabels | null> {
  const { rows } = await db.query<TaskForLabels>({
    name: 'labels-lock-task',
    text: `SELECT t.id, t.number, p.task_prefix AS prefix,
             coalesce((SELECT array_agg(tl.label_id::text) FROM task_labels tl WHERE tl.task_id = t.id), '{}') AS "labelIds"
           FROM tasks t JOIN projects p ON p.id = t.project_id
           WHERE t.workspace_id = $1 AND t.id = $2 FOR NO KEY UPDATE OF t`,
    values: [workspaceId, id],
  });
  return rows[0] ?? null;
}

export async function insertTaskLabel(db: Queryable, taskId: string, labelId: string): Promise<void> {
  await db.query('INSERT INTO task_labels (task_id, label_id) VALUES ($1, $2)', [taskId, labelId]);
}

export async function deleteTaskLabel(db: Queryable, taskId: string, labelId: string): Promise<void> {
  await db.query('DELETE FROM task_labels WHERE task_id = $1 AND label_id = $2', [taskId, labelId]);
}

/**
 * Marks the tasks changed: a new row version (so a PATCH planned on the old one is planned again,
 * with the new labels in its event) and `updated_at`; the list triggers of migrations 005/006 run too.
 */
export async function touchTasks(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query({
    name: 'labels-touch-tasks',
    text: 'UPDATE tasks SET updated_at = now() WHERE workspace_id = $1 AND id = ANY($2::uuid[])',
    values: [workspaceId, ids],
  });
}

export interface TaskEventRow {
  eventId: string;
  taskId: string;
  event: TaskEvent;
  /** The request that made the change (a Kafka header of the event). */
  requestId: string | null;
  /** The trace context of the call that made it (migration 016), when traced. */
  traceparent: string | null;
}

/** The events of several task changes of one workspace, into the outbox in one statement (its relay publishes them). */
export async function insertTaskEvents(db: Queryable, workspaceId: string, events: readonly TaskEventRow[]): Promise<void> {
  if (events.length === 0) return;
  await db.query({
    name: 'labels-insert-task-events',
    text: `INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, workspace_id, created_at, request_id, traceparent)
           SELECT e.id, 'task', e.task_id::text, e.kind, e.payload, $1, e.created_at, e.request_id, e.traceparent
           FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::jsonb[], $6::timestamptz[], $7::text[], $8::text[]) WITH ORDINALITY
             AS e(id, task_id, kind, payload, created_at, request_id, traceparent, ord)
           ORDER BY e.ord`,
    values: [
      workspaceId,
      events.map((row) => row.eventId),
      events.map((row) => row.taskId),
      events.map((row) => row.event.event),
      events.map((row) => JSON.stringify(row.event)),
      events.map((row) => row.event.createdAt),
      events.map((row) => row.requestId),
      events.map((row) => row.traceparent),
    ],
  });
}
