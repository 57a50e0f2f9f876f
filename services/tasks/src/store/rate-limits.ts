import type { Queryable } from '@tws/common';

export interface UsageRow {
  keyHash: string;
  consumed: number;
}

/** A replica counts as live this long after its last sync. */
const replicaLiveSeconds = 30;
/** Buckets past their refill deleted per sync at most (the rest go at the next ones). */
const cleanupBatch = 500;

/**
 * Applies one replica's usage to the shared buckets and returns them: each bucket is refilled for
 * the time since it was last touched (at `perSecond`, up to `burst`), then charged the requests
 * reported; a debt (negative tokens) is kept down to −burst, so an overshoot is paid back. One
 * statement, rows locked in key order (two replicas syncing the same keys cannot deadlock).
 */
export interface BucketRow {
  tokens: number;
  total: number;
  created: boolean;
}

export async function applyUsage(db: Queryable, usages: readonly UsageRow[], policy: { perSecond: number; burst: number }): Promise<Map<string, BucketRow>> {
  if (usages.length === 0) return new Map();
  // On conflict `excluded.total` is the reported consumption; `xmax = 0` tells a row this statement inserted.
  const { rows } = await db.query<{ key_hash: string; tokens: number; total: string; created: boolean }>(
    `INSERT INTO rate_limit_buckets AS b (key_hash, tokens, total, updated_at)
     SELECT u.key_hash, greatest(-$4::float8, $4::float8 - u.consumed), u.consumed, now()
       FROM unnest($1::text[], $2::int[]) AS u(key_hash, consumed)
      ORDER BY u.key_hash
     ON CONFLICT (key_hash) DO UPDATE SET
       tokens = greatest(
         -$4::float8,
         least($4::float8, b.tokens + $3::float8 * greatest(0::float8, extract(epoch FROM now() - b.updated_at)::float8)) - excluded.total
       ),
       total = b.total + excluded.total,
       updated_at = greatest(b.updated_at, now())
     RETURNING key_hash, tokens, total, (xmax = 0) AS created`,
    [usages.map((usage) => usage.keyHash), usages.map((usage) => usage.consumed), policy.perSecond, policy.burst],
  );
  return new Map(rows.map((row) => [row.key_hash, { tokens: Number(row.tokens), total: Number(row.total), created: row.created }]));
}

/** Records the replica as live and returns how many are (itself included). */
export async function touchReplica(db: Queryable, replicaId: string): Promise<number> {
  const { rows } = await db.query<{ replicas: string }>(
    `WITH seen AS (
       INSERT INTO rate_limit_replicas (replica_id, seen_at) VALUES ($1, now())
       ON CONFLICT (replica_id) DO UPDATE SET seen_at = now()
     )
     SELECT 1 + count(*) AS replicas FROM rate_limit_replicas
      WHERE replica_id <> $1 AND seen_at > now() - make_interval(secs => $2)`,
    [replicaId, replicaLiveSeconds],
  );
  return Number(rows[0]?.replicas ?? 1);
}

/**
 * Forgets buckets untouched for `idleSeconds` (full again by then: an absent bucket starts full) and
 * replicas gone for an hour, a bounded batch per call.
 */
export async function forgetIdle(db: Queryable, idleSeconds: number): Promise<void> {
  await db.query(
    `DELETE FROM rate_limit_buckets WHERE key_hash IN (
       SELECT key_hash FROM rate_limit_buckets WHERE updated_at < now() - make_interval(secs => $1) ORDER BY updated_at LIMIT $2
     )`,
    [idleSeconds, cleanupBatch],
  );
  await db.query(`DELETE FROM rate_limit_replicas WHERE seen_at < now() - interval '1 hour'`);
}
