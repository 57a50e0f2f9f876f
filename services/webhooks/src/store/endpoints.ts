import { inTransaction, type Pool } from '@tws/common';

export interface EndpointRecord {
  id: string;
  workspaceId: string;
  url: string;
  events: string[];
  createdAt: Date;
}

interface EndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  events: string[];
  created_at: Date;
}

const columns = 'id, workspace_id, url, events, created_at';
const toRecord = (row: EndpointRow): EndpointRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  url: row.url,
  events: row.events,
  createdAt: row.created_at,
});

/** Endpoints of the `webhooks` schema; every read is scoped to a workspace. */
export class EndpointStore {
  constructor(private readonly pool: Pool) {}

  async create(input: { id: string; workspaceId: string; url: string; events: string[]; secretCiphertext: Buffer }): Promise<EndpointRecord> {
    const { rows } = await this.pool.query<EndpointRow>(
      `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext) VALUES ($1, $2, $3, $4, $5) RETURNING ${columns}`,
      [input.id, input.workspaceId, input.url, input.events, input.secretCiphertext],
    );
    return toRecord(rows[0]!);
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
      await client.query(
        `UPDATE deliveries SET state = 'cancelled', handoff_pending = false, parked = false, next_attempt_at = NULL, updated_at = clock_timestamp()
         WHERE endpoint_id = $1 AND state = 'pending'`,
        [id],
      );
      return true;
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
