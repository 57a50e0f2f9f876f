import type { Pool } from '@tws/common';
import { ShardedLeases, type LeaseKey } from './sharded-leases.js';

/**
 * A backlog's shards (migration 010): a parked delivery belongs to shard hash(its event's task id)
 * mod this, and each shard is drained by one replica at a time, so a task's deliveries keep their
 * order while several replicas drain one endpoint's backlog.
 */
export const backlogShards = 8;

/** The owner of an endpoint's backlog_leases row while replicas of this version drain it in shards. */
export const shardedOwner = 'shards';

/** A delivery's task key, in SQL (`task` an expression of the event's task id): its `task_key` (migration 019). */
export const taskKeyOf = (task: string): string => `hashtext(${task})`;

/** A delivery's shard, in SQL (`task` an expression of the event's task id): its `backlog_shard` (migration 014), from its task key. */
export const shardOf = (task: string): string => `((${taskKeyOf(task)} & 2147483647) % ${backlogShards})`;

/** The shard of `deliveries d`: its own column, or (a row written before migration 014) its event's task's. */
const shardOfDelivery = `coalesce(d.backlog_shard, (SELECT ${shardOf('ev.task_id')} FROM events ev WHERE ev.id = d.event_id))`;

/** A shard of an endpoint's backlog. */
export interface ShardKey {
  endpointId: string;
  shard: number;
}

const toLeaseKey = ({ endpointId, shard }: ShardKey): LeaseKey => ({ id: endpointId, shard });

export interface ShardLease extends ShardKey {
  owner: string;
}

/** Where a parked delivery stands in its endpoint's backlog (created_at as Postgres writes it, and id). */
export interface BacklogPlace {
  createdAt: string;
  id: string;
}

export interface ParkedDelivery {
  id: string;
  shard: number;
  place: BacklogPlace;
}

/**
 * Endpoint backlogs in Postgres: deliveries parked because their endpoint already held as much work
 * as a replica gives it (see migrations/005). Parking is the durable hand-off that lets the Kafka
 * offset move on; the backlog is drained oldest first, shard by shard, each shard by the replica
 * that holds its lease (migration 010).
 */
export class BacklogStore {
  private readonly shardLeaseTable: ShardedLeases;

  constructor(private readonly pool: Pool) {
    this.shardLeaseTable = new ShardedLeases(pool, 'backlog_shard_leases');
  }

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

  /**
   * Takes or renews the endpoints' backlog_leases rows for the replicas that drain in shards (owner
   * `shardedOwner`, shared by all of them); returns the endpoints held so. An endpoint whose row an
   * older replica holds (its own owner, during a rolling upgrade) is left to it.
   */
  async claimEndpoints(endpointIds: string[], leaseMs: number): Promise<string[]> {
    if (endpointIds.length === 0) return [];
    const { rows } = await this.pool.query<{ endpoint_id: string }>({
      text: `INSERT INTO backlog_leases (endpoint_id, owner, expires_at)
       SELECT id, $2, clock_timestamp() + make_interval(secs => $3::float8 / 1000) FROM unnest($1::uuid[]) AS i (id)
       ON CONFLICT (endpoint_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE backlog_leases.owner = excluded.owner OR backlog_leases.expires_at < clock_timestamp()
       RETURNING endpoint_id`,
      values: [endpointIds, shardedOwner, leaseMs],
    });
    return rows.map((row) => row.endpoint_id);
  }

  /** Gives back the endpoints' shared rows once no replica holds a shard of them (backlog drained). */
  async releaseEndpoints(endpointIds: string[]): Promise<void> {
    if (endpointIds.length === 0) return;
    await this.pool.query({
      text: `DELETE FROM backlog_leases l WHERE l.endpoint_id = ANY ($1::uuid[]) AND l.owner = $2
       AND NOT EXISTS (SELECT 1 FROM backlog_shard_leases s WHERE s.endpoint_id = l.endpoint_id AND s.expires_at > clock_timestamp())`,
      values: [endpointIds, shardedOwner],
    });
  }

  /** The live shard leases of these endpoints (any owner). */
  async shardLeases(endpointIds: string[]): Promise<ShardLease[]> {
    if (endpointIds.length === 0) return [];
    const { rows } = await this.pool.query<{ endpoint_id: string; shard: number; owner: string }>({
      text: 'SELECT endpoint_id, shard, owner FROM backlog_shard_leases WHERE endpoint_id = ANY ($1::uuid[]) AND expires_at > clock_timestamp()',
      values: [endpointIds],
    });
    return rows.map((row) => ({ endpointId: row.endpoint_id, shard: row.shard, owner: row.owner }));
  }

  /** Takes or renews these shard leases for `owner`; returns the ones it holds. */
  async leaseShards(owner: string, keys: ShardKey[], leaseMs: number): Promise<ShardKey[]> {
    const held = await this.shardLeaseTable.lease(owner, keys.map(toLeaseKey), leaseMs);
    return held.map(({ id, shard }) => ({ endpointId: id, shard }));
  }

  /** Gives shard leases back (drained, or shutdown). */
  async releaseShards(owner: string, keys: ShardKey[]): Promise<void> {
    await this.shardLeaseTable.release(owner, keys.map(toLeaseKey));
  }

  /**
   * The oldest parked deliveries of an endpoint in these shards, skipping those already being
   * attempted here, with their shard and their place in the backlog (`after` of the next call).
   * Walks the endpoint's parked rows in order (deliveries_parked_idx) and keeps those of the shards;
   * with `after`, from just past that place (a drainer's walk through a backlog bigger than one batch
   * does not read again, each batch, the rows it handed out and the entries their attempts left dead).
   */
  async oldest(endpointId: string, shards: number[], skip: string[], limit: number, after?: BacklogPlace): Promise<ParkedDelivery[]> {
    const { rows } = await this.pool.query<{ id: string; shard: number; created_at: string }>({
      // created_at as text: a backlog place keeps its microseconds (a Date would drop them, and the
      // deliveries of one fan-out are a microsecond apart). The shard from the row (migration 014): no
      // join with events, so the walk goes down deliveries_parked_idx in order and stops at the limit.
      text: `SELECT d.id, s.shard, d.created_at::text AS created_at
       FROM deliveries d CROSS JOIN LATERAL (SELECT ${shardOfDelivery} AS shard) s
       WHERE d.endpoint_id = $1 AND d.parked AND d.id <> ALL ($2::uuid[]) AND s.shard = ANY ($4::int[])
       ${after ? 'AND (d.created_at, d.id) > ($5::timestamptz, $6::uuid)' : ''}
       ORDER BY d.created_at, d.id LIMIT $3`,
      values: [endpointId, skip, limit, shards, ...(after ? [after.createdAt, after.id] : [])],
    });
    return rows.map((row) => ({ id: row.id, shard: row.shard, place: { createdAt: row.created_at, id: row.id } }));
  }
}
