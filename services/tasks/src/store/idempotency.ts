import type { Queryable } from '@tws/common';

export interface StoredAnswer {
  statusCode: number;
  contentType: string;
  body: Buffer;
}

/** The row of (workspace, key) as Begin finds it when it could not claim it. */
export type ExistingKey =
  | { state: 'answered'; fingerprint: Buffer; answer: StoredAnswer }
  | { state: 'claimed'; fingerprint: Buffer };

/**
 * Claims (workspace, key) with `claimToken`: a new row, or one that expired, or an abandoned claim
 * (no answer after `lockTimeoutMs`) of the same fingerprint. One statement: of concurrent claims of
 * one key exactly one returns true (the others wait for its insert to commit, then update nothing).
 */
export async function claimKey(
  db: Queryable,
  claim: { workspaceId: string; key: string; fingerprint: Buffer; claimToken: string; ttlMs: number; lockTimeoutMs: number },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO idempotency_keys AS k (workspace_id, key, fingerprint, claim_token, claimed_at, expires_at)
     VALUES ($1, $2, $3, $4, now(), now() + $5 * interval '1 millisecond')
     ON CONFLICT (workspace_id, key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, claim_token = EXCLUDED.claim_token, claimed_at = now(),
            expires_at = EXCLUDED.expires_at, status_code = NULL, content_type = NULL, body = NULL
      WHERE k.expires_at <= now()
         OR (k.status_code IS NULL AND k.claimed_at <= now() - $6 * interval '1 millisecond' AND k.fingerprint = EXCLUDED.fingerprint)`,
    [claim.workspaceId, claim.key, claim.fingerprint, claim.claimToken, claim.ttlMs, claim.lockTimeoutMs],
  );
  return rowCount === 1;
}

/** The live (unexpired) row of (workspace, key), if any. */
export async function findKey(db: Queryable, workspaceId: string, key: string): Promise<ExistingKey | undefined> {
  const { rows } = await db.query<{ fingerprint: Buffer; status_code: number | null; content_type: string | null; body: Buffer | null }>(
    `SELECT fingerprint, status_code, content_type, body FROM idempotency_keys
      WHERE workspace_id = $1 AND key = $2 AND expires_at > now()`,
    [workspaceId, key],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (row.status_code === null) return { state: 'claimed', fingerprint: row.fingerprint };
  return {
    state: 'answered',
    fingerprint: row.fingerprint,
    answer: { statusCode: row.status_code, contentType: row.content_type ?? '', body: row.body ?? Buffer.alloc(0) },
  };
}

/** Stores the answer of the claim `claimToken` (kept `ttlMs` from now); false when the claim is no longer held. */
export async function storeAnswer(
  db: Queryable,
  claim: { workspaceId: string; key: string; claimToken: string; ttlMs: number },
  answer: StoredAnswer,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE idempotency_keys
        SET claim_token = NULL, status_code = $4, content_type = $5, body = $6, expires_at = now() + $7 * interval '1 millisecond'
      WHERE workspace_id = $1 AND key = $2 AND claim_token = $3`,
    [claim.workspaceId, claim.key, claim.claimToken, answer.statusCode, answer.contentType, answer.body, claim.ttlMs],
  );
  return rowCount === 1;
}

/** Deletes the claim `claimToken` (not an answered row, nor another execution's claim). */
export async function releaseClaim(db: Queryable, claim: { workspaceId: string; key: string; claimToken: string }): Promise<void> {
  await db.query('DELETE FROM idempotency_keys WHERE workspace_id = $1 AND key = $2 AND claim_token = $3', [claim.workspaceId, claim.key, claim.claimToken]);
}

/** Deletes up to `limit` expired rows; returns how many. */
export async function deleteExpiredKeys(db: Queryable, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT $1)`,
    [limit],
  );
  return rowCount ?? 0;
}
