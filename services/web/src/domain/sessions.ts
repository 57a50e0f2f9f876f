import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '@tws/common';
import { deleteEndedSessions, deleteSession, findLiveSession, insertSession, type SessionLimits } from '../store/sessions.js';

/** A session token as the cookie carries it: 32 random bytes, base64url. */
const tokenPattern = /^[A-Za-z0-9_-]{43}$/;

export const hashSessionToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** A signed-in person's session, as a request sees it. */
export interface ActiveSession {
  /** sha256 of the cookie's token: the row's key, and what the CSRF token is bound to. */
  idHash: Buffer;
  /** The person: the verified email they signed in with (lower-cased). */
  email: string;
  createdAt: Date;
}

/**
 * Server-side sessions in Postgres (schema `web`): created at sign-in, looked up on every request
 * with the idle and absolute timeouts enforced by the query, ended at sign-out, swept when ended.
 */
export class Sessions {
  private readonly limits: SessionLimits;

  constructor(
    private readonly db: Queryable,
    options: { idleSeconds: number; absoluteSeconds: number },
  ) {
    this.limits = {
      ...options,
      // Idle time is measured from the last write of last_seen_at: at most a minute (or 1/30 of
      // the idle timeout) late, for at most one write per session per interval.
      touchAfterSeconds: Math.max(1, Math.min(60, Math.floor(options.idleSeconds / 30))),
    };
  }

  /** A new session for the person; answers the token for the cookie (never stored). */
  async create(email: string): Promise<{ token: string; session: ActiveSession }> {
    const token = randomBytes(32).toString('base64url');
    const idHash = hashSessionToken(token);
    await insertSession(this.db, idHash, email);
    return { token, session: { idHash, email, createdAt: new Date() } };
  }

  /** The live session of a cookie's token; undefined for junk, unknown, idle or too old sessions. */
  async resolve(token: string | undefined): Promise<ActiveSession | undefined> {
    if (!token || !tokenPattern.test(token)) return undefined;
    const idHash = hashSessionToken(token);
    const row = await findLiveSession(this.db, idHash, this.limits);
    return row ? { idHash, email: row.email, createdAt: row.createdAt } : undefined;
  }

  async end(idHash: Buffer): Promise<void> {
    await deleteSession(this.db, idHash);
  }

  /** Deletes every ended session, a batch at a time; answers how many. */
  async sweep(batch = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await deleteEndedSessions(this.db, this.limits, batch);
      total += deleted;
      if (deleted < batch) return total;
    }
  }
}
