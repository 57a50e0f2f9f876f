import type { Queryable } from '@tws/common';

export interface RevokedGrantRow {
  grantId: string;
  expiresAt: Date;
}

/** Records a revoked grant (the later expiry wins when it is announced again) and forgets expired ones. */
export async function recordRevokedGrant(db: Queryable, grantId: string, expiresAt: Date, actorUserId: string | null): Promise<void> {
  await db.query('DELETE FROM revoked_grants WHERE expires_at < now()');
  await db.query(
    `INSERT INTO revoked_grants (grant_id, expires_at, revoked_by) VALUES ($1, $2, $3)
     ON CONFLICT (grant_id) DO UPDATE SET expires_at = GREATEST(revoked_grants.expires_at, EXCLUDED.expires_at)`,
    [grantId, expiresAt, actorUserId],
  );
}

/** Live revoked grants (tokens may still be valid), latest expiry first, at most `limit` (+1 to tell truncation). */
export async function liveRevokedGrants(db: Queryable, limit: number, grantId?: string): Promise<RevokedGrantRow[]> {
  const { rows } = await db.query<{ grant_id: string; expires_at: Date }>(
    `SELECT grant_id, expires_at FROM revoked_grants
      WHERE expires_at > now() AND ($2::text IS NULL OR grant_id = $2)
      ORDER BY expires_at DESC LIMIT $1`,
    [limit, grantId ?? null],
  );
  return rows.map((row) => ({ grantId: row.grant_id, expiresAt: row.expires_at }));
}
