import type { Queryable } from '@tws/common';

export interface SessionRow {
  email: string;
  createdAt: Date;
}

/** The timeouts a lookup enforces, in seconds. */
export interface SessionLimits {
  idleSeconds: number;
  absoluteSeconds: number;
  /** last_seen_at is written again only when it is older than this (one write per interval, not per request). */
  touchAfterSeconds: number;
}

export async function insertSession(db: Queryable, idHash: Buffer, email: string): Promise<void> {
  await db.query({ name: 'web-insert-session', text: 'INSERT INTO sessions (id_hash, email) VALUES ($1, $2)', values: [idHash, email] });
}

/**
 * The live session with this id hash, in one round trip: none when it has been idle or has lived
 * too long (by the database's clock, so every replica agrees); its last_seen_at moves to now when
 * it is older than `touchAfterSeconds`.
 */
export async function findLiveSession(db: Queryable, idHash: Buffer, limits: SessionLimits): Promise<SessionRow | undefined> {
  const { rows } = await db.query<{ email: string; created_at: Date }>({
    name: 'web-find-live-session',
    text: `WITH live AS (
        SELECT id_hash, email, created_at, last_seen_at FROM sessions
        WHERE id_hash = $1
          AND last_seen_at > now() - make_interval(secs => $2)
          AND created_at > now() - make_interval(secs => $3)
      ), touched AS (
        UPDATE sessions s SET last_seen_at = now() FROM live
        WHERE s.id_hash = live.id_hash AND live.last_seen_at < now() - make_interval(secs => $4)
        RETURNING s.id_hash
      )
      SELECT email, created_at FROM live`,
    values: [idHash, limits.idleSeconds, limits.absoluteSeconds, limits.touchAfterSeconds],
  });
  const row = rows[0];
  return row ? { email: row.email, createdAt: row.created_at } : undefined;
}

export async function deleteSession(db: Queryable, idHash: Buffer): Promise<void> {
  await db.query({ name: 'web-delete-session', text: 'DELETE FROM sessions WHERE id_hash = $1', values: [idHash] });
}

/** Deletes up to `batch` ended sessions; answers how many it deleted. */
export async function deleteEndedSessions(db: Queryable, limits: Omit<SessionLimits, 'touchAfterSeconds'>, batch: number): Promise<number> {
  const { rowCount } = await db.query({
    name: 'web-delete-ended-sessions',
    text: `DELETE FROM sessions WHERE id_hash IN (
        SELECT id_hash FROM sessions WHERE last_seen_at <= now() - make_interval(secs => $1)
        UNION
        SELECT id_hash FROM sessions WHERE created_at <= now() - make_interval(secs => $2)
        LIMIT $3)`,
    values: [limits.idleSeconds, limits.absoluteSeconds, batch],
  });
  return rowCount ?? 0;
}
