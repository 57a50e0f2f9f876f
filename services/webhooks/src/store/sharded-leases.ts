import type { Pool } from '@tws/common';

/** A key of a sharded lease table: an id (a workspace's, an endpoint's) and one of its shards. */
export interface LeaseKey {
  id: string;
  shard: number;
}

/** The two tables that lease (id, shard) pairs: the fan-out expanders' and the backlog drainers'. */
const tables = {
  fanout_leases: { idColumn: 'workspace_id', idType: 'text' },
  backlog_shard_leases: { idColumn: 'endpoint_id', idType: 'uuid' },
} as const;

/**
 * One lease rule for both tables (migrations 009 and 010): a lease is taken when free or expired,
 * renewed only by its owner, given back only by its owner; every statement takes a batch of keys.
 */
export class ShardedLeases {
  private readonly leaseText: string;
  private readonly releaseText: string;

  constructor(
    private readonly pool: Pool,
    table: keyof typeof tables,
  ) {
    const { idColumn, idType } = tables[table];
    this.leaseText = `INSERT INTO ${table} (${idColumn}, shard, owner, expires_at)
       SELECT id, shard, $3, clock_timestamp() + make_interval(secs => $4::float8 / 1000) FROM unnest($1::${idType}[], $2::smallint[]) AS i (id, shard)
       ON CONFLICT (${idColumn}, shard) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE ${table}.owner = excluded.owner OR ${table}.expires_at < clock_timestamp()
       RETURNING ${idColumn} AS id, shard`;
    this.releaseText = `DELETE FROM ${table} l USING unnest($1::${idType}[], $2::smallint[]) AS i (id, shard)
       WHERE l.${idColumn} = i.id AND l.shard = i.shard AND l.owner = $3`;
  }

  /** Takes or renews these leases for `owner` for `leaseMs`; returns the ones it holds. */
  async lease(owner: string, keys: LeaseKey[], leaseMs: number): Promise<LeaseKey[]> {
    if (keys.length === 0) return [];
    const { rows } = await this.pool.query<LeaseKey>({
      text: this.leaseText,
      values: [keys.map((key) => key.id), keys.map((key) => key.shard), owner, leaseMs],
    });
    return rows;
  }

  /** Gives back those of these leases `owner` holds. */
  async release(owner: string, keys: LeaseKey[]): Promise<void> {
    if (keys.length === 0) return;
    await this.pool.query({
      text: this.releaseText,
      values: [keys.map((key) => key.id), keys.map((key) => key.shard), owner],
    });
  }
}
