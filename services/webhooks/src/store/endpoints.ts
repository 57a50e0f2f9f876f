import { inTransaction, recordAudit, type Pool } from '@tws/common';

export type DisabledReason = 'manual' | 'failing';

export interface EndpointRecord {
  id: string;
  workspaceId: string;
  url: string;
  events: string[];
  createdAt: Date;
  disabledAt: Date | null;
  disabledReason: DisabledReason | null;
  /** While a rotated-out secret still signs: when it is deleted. */
  previousSecretExpiresAt: Date | null;
}

interface EndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  events: string[];
  created_at: Date;
  disabled_at: Date | null;
  disabled_reason: DisabledReason | null;
  previous_secret_expires_at: Date | null;
}

const columns = 'id, workspace_id, url, events, created_at, disabled_at, disabled_reason, previous_secret_expires_at';
const toRecord = (row: EndpointRow): EndpointRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  url: row.url,
  events: row.events,
  createdAt: row.created_at,
  disabledAt: row.disabled_at,
  disabledReason: row.disabled_reason,
  previousSecretExpiresAt: row.previous_secret_expires_at,
});

/** Cancels the unfinished deliveries of an endpoint (deleted or disabled): waiting retries find nothing to do. */
const cancelPending = `UPDATE deliveries SET state = 'cancelled', handoff_pending = false, parked = false, next_attempt_at = NULL, updated_at = clock_timestamp()
  WHERE endpoint_id = $1 AND state = 'pending'`;

export interface EndpointChanges {
  url?: string | undefined;
  events?: string[] | undefined;
  enabled?: boolean | undefined;
}

/** Endpoints of the `webhooks` schema; every read is scoped to a workspace. */
export class EndpointStore {
  constructor(private readonly pool: Pool) {}

  /** Every change below writes its audit row (migration 007) in its own transaction: names only, never the secret. */
  async create(input: { id: string; workspaceId: string; url: string; events: string[]; secretCiphertext: Buffer }): Promise<EndpointRecord> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<EndpointRow>(
        `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext) VALUES ($1, $2, $3, $4, $5) RETURNING ${columns}`,
        [input.id, input.workspaceId, input.url, input.events, input.secretCiphertext],
      );
      await recordAudit(client, { workspaceId: input.workspaceId, action: 'webhook.created', resourceType: 'webhook', resourceId: input.id });
      return toRecord(rows[0]!);
    });
  }

  async list(workspaceId: string): Promise<EndpointRecord[]> {
    const { rows } = await this.pool.query<EndpointRow>(
      `SELECT ${columns} FROM endpoints WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`,
      [workspaceId],
    );
    return rows.map(toRecord);
  }

  async get(workspaceId: string, id: string): Promise<EndpointRecord | undefined> {
    const { rows } = await this.pool.query<EndpointRow>(
      `SELECT ${columns} FROM endpoints WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL`,
      [id, workspaceId],
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /**
   * Marks the endpoint deleted (its delivery log stays) and cancels its unfinished deliveries, so
   * waiting retries find nothing to do. Returns false when there was no such endpoint.
   */
  async delete(workspaceId: string, id: string): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const deleted = await client.query(
        'UPDATE endpoints SET deleted_at = now() WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL',
        [id, workspaceId],
      );
      if (deleted.rowCount !== 1) return false;
      await client.query(cancelPending, [id]);
      await recordAudit(client, { workspaceId, action: 'webhook.deleted', resourceType: 'webhook', resourceId: id.toLowerCase() });
      return true;
    });
  }

  /**
   * PATCH: url and events as given; `enabled: false` disables (reason `manual`, unless already
   * disabled) and cancels pending deliveries in the same transaction; `enabled: true` clears the
   * disabled state and the failure streak. Undefined when there is no such endpoint.
   */
  async update(workspaceId: string, id: string, changes: EndpointChanges): Promise<EndpointRecord | undefined> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<EndpointRow>(
        `UPDATE endpoints SET
           url = coalesce($3, url),
           events = coalesce($4::text[], events),
           disabled_at = CASE WHEN $5::boolean IS NULL THEN disabled_at WHEN $5 THEN NULL ELSE coalesce(disabled_at, now()) END,
           disabled_reason = CASE WHEN $5::boolean IS NULL THEN disabled_reason WHEN $5 THEN NULL ELSE coalesce(disabled_reason, 'manual') END,
           failing_since = CASE WHEN $5::boolean THEN NULL ELSE failing_since END
         WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL
         RETURNING ${columns}`,
        [id, workspaceId, changes.url ?? null, changes.events ?? null, changes.enabled ?? null],
      );
      if (!rows[0]) return undefined;
      if (changes.enabled === false) await client.query(cancelPending, [id]);
      const changed = (['url', 'events', 'enabled'] as const).filter((name) => changes[name] !== undefined);
      await recordAudit(client, { workspaceId, action: 'webhook.updated', resourceType: 'webhook', resourceId: rows[0].id, changes: changed });
      return toRecord(rows[0]);
    });
  }

  /**
   * Replaces the secret; the current one becomes the previous one until `overlapSeconds` from now
   * (0: it is deleted at once). A previous secret still in its overlap is replaced (one previous at most).
   */
  async rotateSecret(workspaceId: string, id: string, secretCiphertext: Buffer, overlapSeconds: number): Promise<EndpointRecord | undefined> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<EndpointRow>(
        `UPDATE endpoints SET
           previous_secret_ciphertext = CASE WHEN $4::int > 0 THEN secret_ciphertext END,
           previous_secret_expires_at = CASE WHEN $4::int > 0 THEN now() + make_interval(secs => $4::int) END,
           secret_ciphertext = $3
         WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL
         RETURNING ${columns}`,
        [id, workspaceId, secretCiphertext, overlapSeconds],
      );
      if (!rows[0]) return undefined;
      await recordAudit(client, { workspaceId, action: 'webhook.secret_rotated', resourceType: 'webhook', resourceId: rows[0].id, changes: ['secret'] });
      return toRecord(rows[0]);
    });
  }

  /** Deletes rotated-out secrets whose overlap is over; returns how many. */
  async forgetExpiredSecrets(): Promise<number> {
    const { rowCount } = await this.pool.query(
      `UPDATE endpoints SET previous_secret_ciphertext = NULL, previous_secret_expires_at = NULL
       WHERE previous_secret_expires_at IS NOT NULL AND previous_secret_expires_at <= now()`,
    );
    return rowCount ?? 0;
  }

  /**
   * Attempt outcomes of a batch: `succeeded` endpoints had a success (their failure streak ends),
   * `failed` ones ended the batch on a failure (a streak starts, after that success if in both lists,
   * at the database's now(), so a late-recorded failure never backdates it); both write only on a
   * change. Enabled endpoints failing for `disableAfterSeconds` or longer are then disabled (reason
   * `failing`) with their pending deliveries cancelled; their ids are returned. 0 = never disable.
   */
  async recordHealth(succeeded: string[], failed: string[], disableAfterSeconds: number): Promise<string[]> {
    if (succeeded.length > 0) {
      await this.pool.query('UPDATE endpoints SET failing_since = NULL WHERE id = ANY ($1::uuid[]) AND failing_since IS NOT NULL', [succeeded]);
    }
    if (failed.length === 0) return [];
    await this.pool.query('UPDATE endpoints SET failing_since = now() WHERE id = ANY ($1::uuid[]) AND failing_since IS NULL', [failed]);
    if (disableAfterSeconds === 0) return [];
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ id: string; workspace_id: string }>(
        `UPDATE endpoints SET disabled_at = now(), disabled_reason = 'failing'
         WHERE id = ANY ($1::uuid[]) AND disabled_at IS NULL AND deleted_at IS NULL
           AND failing_since <= now() - make_interval(secs => $2::int)
         RETURNING id, workspace_id`,
        [failed, disableAfterSeconds],
      );
      for (const row of rows) await client.query(cancelPending, [row.id]);
      // The service itself disabled them (actor `system`): audited like a PATCH enabled=false.
      await recordAudit(
        client,
        ...rows.map((row) => ({ workspaceId: row.workspace_id, action: 'webhook.disabled', resourceType: 'webhook', resourceId: row.id, changes: ['enabled'] })),
      );
      return rows.map((row) => row.id);
    });
  }

  /**
   * Endpoints deleted after `since` (the database's clock), oldest first; without `since`, those of
   * the last hour. A deletion committed late with an earlier timestamp is caught by reading again
   * from a little before the newest one seen (the caller's overlap).
   */
  async deletedSince(since: Date | undefined, limit = 10_000): Promise<Array<{ id: string; deletedAt: Date }>> {
    const { rows } = await this.pool.query<{ id: string; deleted_at: Date }>(
      `SELECT id, deleted_at FROM endpoints
       WHERE deleted_at IS NOT NULL AND deleted_at > coalesce($1::timestamptz, now() - interval '1 hour')
       ORDER BY deleted_at LIMIT $2`,
      [since ?? null, limit],
    );
    return rows.map((row) => ({ id: row.id, deletedAt: row.deleted_at }));
  }
}
