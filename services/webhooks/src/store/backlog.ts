import type { Pool } from '@tws/common';

/**
 * Endpoint backlogs in Postgres: deliveries parked because their endpoint already held as much work
 * as a replica gives it (see migrations/005). Parking is the durable hand-off that lets the Kafka
 * offset move on; one replica at a time (the lease holder) drains an endpoint's backlog, oldest first.
 */
export class BacklogStore {
  constructor(private readonly pool: Pool) {}

  /** Parks deliveries still waiting for exactly that attempt; returns the ids parked. */
  async park(items: Array<{ deliveryId: string; attempt: number }>): Promise<Set<string>> {
    if (items.length === 0) return new Set();
    const { rows } = await this.pool.query<{ id: string }>({
      text: `UPDATE deliveries d SET parked = true
       FROM unnest($1::uuid[], $2::smallint[]) AS i (id, attempt)
       WHERE d.id = i.id AND d.state = 'pending' AND d.next_attempt = i.attempt
       RETURNING d.id`,
      values: [items.map((item) => item.deliveryId), items.map((item) => item.attempt)],
    });
    return new Set(rows.map((row) => row.id));
  }

  /** Endpoints with parked deliveries (at most `limit`). */
  async endpointsWithBacklog(limit = 1_000): Promise<string[]> {
    // A loose index scan: one probe per endpoint instead of reading every parked row.
    const { rows } = await this.pool.query<{ endpoint_id: string }>({
      text: `WITH RECURSIVE walk AS (
         (SELECT endpoint_id FROM deliveries WHERE parked ORDER BY endpoint_id LIMIT 1)
         UNION ALL
         SELECT (SELECT d.endpoint_id FROM deliveries d WHERE d.parked AND d.endpoint_id > w.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
         FROM walk w WHERE w.endpoint_id IS NOT NULL
       )
       SELECT endpoint_id FROM walk WHERE endpoint_id IS NOT NULL LIMIT $1`,
      values: [limit],
    });
    return rows.map((row) => row.endpoint_id);
  }

  /** Takes or renews the drain lease of these endpoints for `owner`; returns the ones it holds. */
  async lease(owner: string, endpointIds: string[], leaseMs: number): Promise<string[]> {
    if (endpointIds.length === 0) return [];
    const { rows } = await this.pool.query<{ endpoint_id: string }>({
      text: `INSERT INTO backlog_leases (endpoint_id, owner, expires_at)
       SELECT id, $2, clock_timestamp() + make_interval(secs => $3::float8 / 1000) FROM unnest($1::uuid[]) AS i (id)
       ON CONFLICT (endpoint_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE backlog_leases.owner = excluded.owner OR backlog_leases.expires_at < clock_timestamp()
       RETURNING endpoint_id`,
      values: [endpointIds, owner, leaseMs],
    });
    return rows.map((row) => row.endpoint_id);
  }

  /** Gives leases up (backlog empty, or shutdown). */
  async release(owner: string, endpointIds: string[]): Promise<void> {
    if (endpointIds.length === 0) return;
    await this.pool.query({
      text: 'DELETE FROM backlog_leases WHERE endpoint_id = ANY ($1::uuid[]) AND owner = $2',
      values: [endpointIds, owner],
    });
  }

  /** The oldest parked deliveries of an endpoint, skipping those already being attempted here. */
  async oldest(endpointId: string, skip: string[], limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>({
      text: `SELECT id FROM deliveries
       WHERE endpoint_id = $1 AND parked AND NOT (id = ANY ($2::uuid[]))
       ORDER BY created_at, id LIMIT $3`,
      values: [endpointId, skip, limit],
    });
    return rows.map((row) => row.id);
  }
}
