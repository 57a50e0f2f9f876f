import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.js';
import { currentRequestId } from '../request-id.js';
import { currentActor, type AuditActor } from './actor.js';

/**
 * The audit trail's storage, the same in every service that owns audited things: an `audit_events`
 * table in the service's own schema (tasks 017, webhooks 007, attachments 004), written in the same
 * transaction as the change it records, listed newest first with a keyset cursor, swept after
 * AUDIT_RETENTION_DAYS. Rows hold names only: the changed fields' names, never their values.
 */

/** Resource kinds and actions are short identifiers (`task`, `task.updated`, `webhook.secret_rotated`). */
const identifier = /^[a-z][a-zA-Z0-9_.]{0,63}$/;
/** At most this many changed-field names per row, each at most 64 characters. */
export const maxAuditChanges = 32;

/** What a change did, as the writing code knows it; who and under which request come from the context. */
export interface AuditEntry {
  workspaceId: string;
  /** `<resourceType>.<verb>`, e.g. `task.created`, `member.role_changed`. */
  action: string;
  resourceType: string;
  resourceId: string;
  /** The names of the fields a change set (empty for creations and deletions). */
  changes?: readonly string[];
}

/** An entry ready to write: with its id, actor and request id fixed when it was made. */
export interface AuditRecord extends Required<AuditEntry> {
  id: string;
  actor: AuditActor;
  requestId: string | null;
}

/** A stored row, as listed. */
export interface AuditRow extends AuditRecord {
  at: Date;
}

/** A place in the newest-first order: rows strictly older are listed after it. */
export interface AuditCursor {
  at: Date;
  id: string;
}

/**
 * An entry with its actor and request id taken from the current context NOW: code that hands the
 * write to a batch shared by several requests (tasks' writeInBatch) builds the record first.
 */
export function auditRecord(entry: AuditEntry): AuditRecord {
  if (!identifier.test(entry.action) || !identifier.test(entry.resourceType)) throw new Error(`invalid audit action ${entry.action}`);
  const changes = [...new Set(entry.changes ?? [])].slice(0, maxAuditChanges);
  if (changes.some((name) => !identifier.test(name))) throw new Error('audit changes are field names');
  return {
    id: randomUUID(),
    workspaceId: entry.workspaceId.toLowerCase(),
    action: entry.action,
    resourceType: entry.resourceType,
    resourceId: entry.resourceId.slice(0, 64),
    changes,
    actor: currentActor(),
    requestId: currentRequestId() ?? null,
  };
}

/**
 * One record as the object `auditInsertSql` reads (`jsonb_populate_record(NULL::audit_events, …)`),
 * for statements that write several things at once (one jsonb per row): as a field of a larger JSON
 * parameter, or as its own text (`auditRecordJson`).
 */
export function auditRecordObject(record: AuditRecord): Record<string, unknown> {
  return {
    id: record.id,
    workspace_id: record.workspaceId,
    actor_type: record.actor.type,
    actor_id: record.actor.id,
    actor_name: record.actor.name,
    action: record.action,
    resource_type: record.resourceType,
    resource_id: record.resourceId,
    changes: record.changes,
    request_id: record.requestId,
  };
}

/** {@link auditRecordObject} as JSON text (one jsonb parameter, or an element of a jsonb[] one). */
export function auditRecordJson(record: AuditRecord): string {
  return JSON.stringify(auditRecordObject(record));
}

const columns = 'id, workspace_id, at, actor_type, actor_id, actor_name, action, resource_type, resource_id, changes, request_id';

/**
 * The INSERT of a data-modifying CTE that writes one audit row per `jsonExpr` (an `auditRecordJson`
 * value) of the rows `from` yields, at the transaction's time (milliseconds: what a cursor carries).
 */
export function auditInsertSql(jsonExpr: string, from: string, where = 'true'): string {
  return `INSERT INTO audit_events (${columns})
    SELECT a.id, a.workspace_id, date_trunc('milliseconds', now()), a.actor_type, a.actor_id, a.actor_name, a.action,
      a.resource_type, a.resource_id, a.changes, a.request_id
    FROM ${from} CROSS JOIN LATERAL jsonb_populate_record(NULL::audit_events, ${jsonExpr}) a
    WHERE ${where}`;
}

/** Writes entries (or prepared records) on `db`: pass the transaction's client of the change. */
export async function recordAudit(db: Queryable, ...entries: Array<AuditEntry | AuditRecord>): Promise<void> {
  if (entries.length === 0) return;
  const records = entries.map((entry) => ('actor' in entry ? entry : auditRecord(entry)));
  await db.query({
    name: 'audit-insert',
    text: auditInsertSql('r.value', 'unnest($1::jsonb[]) AS r(value)'),
    values: [records.map(auditRecordJson)],
  });
}

interface AuditDbRow {
  id: string;
  workspace_id: string;
  at: Date;
  actor_type: AuditActor['type'];
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  resource_type: string;
  resource_id: string;
  changes: string[];
  request_id: string | null;
}

/** The workspace's rows older than `before` (all when absent), newest first; `limit` 1..201. */
export async function listAudit(db: Queryable, query: { workspaceId: string; before?: AuditCursor | undefined; limit: number }): Promise<AuditRow[]> {
  const limit = Math.max(1, Math.min(201, Math.trunc(query.limit)));
  const { rows } = await db.query<AuditDbRow>({
    name: 'audit-list',
    text: `SELECT ${columns} FROM audit_events
           WHERE workspace_id = $1 AND ($2::timestamptz IS NULL OR (at, id) < ($2::timestamptz, $3::uuid))
           ORDER BY at DESC, id DESC LIMIT $4`,
    values: [query.workspaceId, query.before?.at ?? null, query.before?.id ?? null, limit],
  });
  return rows.map((row) => ({
    id: row.id,
    workspaceId: row.workspace_id,
    at: row.at,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
    action: row.action,
    resourceType: row.resource_type,
    resourceId: row.resource_id,
    changes: row.changes,
    requestId: row.request_id,
  }));
}

/** Deletes rows older than `days` in batches of `batch` (short locks); the number deleted. */
export async function sweepAudit(db: Queryable, days: number, batch = 5_000): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await db.query({
      name: 'audit-sweep',
      text: `DELETE FROM audit_events WHERE id IN (
               SELECT id FROM audit_events WHERE at < now() - make_interval(days => $1) LIMIT $2)`,
      values: [days, batch],
    });
    total += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) return total;
  }
}
