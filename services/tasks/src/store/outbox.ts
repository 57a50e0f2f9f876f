import type { Queryable } from '@tws/common';

/** The channel the outbox trigger NOTIFYs on commit (migration 003_outbox.sql). */
export const outboxChannel = 'tasks_outbox';

/** Any value of the same 64-bit space as other advisory locks of this database; fixed for the relay. */
const relayLockKey = 'tasks:outbox-relay';

export interface OutboxRow {
  id: string;
  aggregateid: string;
  type: string;
  payload: unknown;
  workspace_id: string;
  /** The request that made the change (migration 009), sent as the `request-id` header. */
  request_id: string | null;
  /** The trace context of the call that made it (migration 016): the parent of the Kafka record's span. */
  traceparent: string | null;
}

/**
 * Takes the relay's session-level advisory lock (on the relay's own connection) and LISTENs for new
 * rows when it got it; false when another session holds it.
 */
export async function takeRelayLock(session: Queryable): Promise<boolean> {
  const { rows } = await session.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [relayLockKey]);
  if (!rows[0]?.locked) return false;
  await session.query(`LISTEN ${outboxChannel}`);
  return true;
}

export async function releaseRelayLock(session: Queryable): Promise<void> {
  await session.query('SELECT pg_advisory_unlock(hashtext($1))', [relayLockKey]);
}

/** The oldest rows neither published nor set aside, in commit (`seq`) order. */
export async function pendingOutboxRows(session: Queryable, limit: number): Promise<OutboxRow[]> {
  const { rows } = await session.query<OutboxRow>({
    name: 'outbox-pending',
    text: `SELECT id, aggregateid, type, payload, workspace_id, request_id, traceparent FROM outbox
           WHERE published_at IS NULL AND rejected_at IS NULL ORDER BY seq LIMIT $1`,
    values: [limit],
  });
  return rows;
}

export async function markOutboxPublished(session: Queryable, ids: string[]): Promise<void> {
  await session.query({
    name: 'outbox-mark-published',
    text: 'UPDATE outbox SET published_at = now() WHERE id = ANY($1::uuid[])',
    values: [ids],
  });
}

/** Sets a row aside (it is never published) with the reason it failed validation. */
export async function markOutboxRejected(session: Queryable, id: string, reason: string): Promise<void> {
  await session.query('UPDATE outbox SET rejected_at = now(), rejected_reason = $2 WHERE id = $1', [id, reason]);
}

/** Deletes up to `limit` rows published more than `retentionMs` ago; returns how many it deleted. */
export async function deletePublishedOutboxRows(session: Queryable, retentionMs: number, limit: number): Promise<number> {
  const { rowCount } = await session.query(
    `DELETE FROM outbox WHERE id IN (
       SELECT id FROM outbox WHERE published_at < now() - make_interval(secs => $1) LIMIT $2)`,
    [retentionMs / 1000, limit],
  );
  return rowCount ?? 0;
}

/** Unpublished rows (not set aside) and the age in seconds of the oldest (0 when none). */
export async function outboxBacklog(pool: Queryable): Promise<{ backlog: number; age: number } | null> {
  const { rows } = await pool.query<{ backlog: number; age: number }>(
    `SELECT count(*)::int AS backlog,
            coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age
     FROM outbox WHERE published_at IS NULL AND rejected_at IS NULL`,
  );
  return rows[0] ?? null;
}
