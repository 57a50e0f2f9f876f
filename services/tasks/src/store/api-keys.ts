import type { Queryable } from '@tws/common';

export interface ApiKeyIdentity {
  apiKeyId: string;
  workspaceId: string;
  name: string;
  userId: string;
}

/** An API key as the workspace settings list it (never the key or its hash). */
export interface ApiKeySummary {
  id: string;
  name: string;
  prefix: string | null;
  createdByUserId: string;
  createdByName: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export async function insertApiKey(
  db: Queryable,
  input: { workspaceId: string; userId: string; name: string; keyHash: Buffer; prefix: string },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO api_keys (workspace_id, user_id, name, key_hash, prefix) VALUES ($1, $2, $3, $4, $5) RETURNING id',
    [input.workspaceId, input.userId, input.name, input.keyHash, input.prefix],
  );
  return rows[0]!.id;
}

interface SummaryRow {
  id: string;
  name: string;
  prefix: string | null;
  user_id: string;
  user_name: string;
  created_at: Date;
  last_used_at: Date | null;
}

const toSummary = (row: SummaryRow): ApiKeySummary => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  createdByUserId: row.user_id,
  createdByName: row.user_name,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

const summarySelect = `SELECT k.id, k.name, k.prefix, k.user_id, u.name AS user_name, k.created_at, k.last_used_at
  FROM api_keys k JOIN users u ON u.id = k.user_id`;

/**
 * The live keys of a workspace, newest first, at most `limit`: every key, or only those `createdBy`
 * created when given.
 */
export async function listLiveApiKeys(db: Queryable, workspaceId: string, createdBy: string | null, limit: number): Promise<ApiKeySummary[]> {
  const { rows } = await db.query<SummaryRow>({
    name: 'tasks-list-live-api-keys',
    text: `${summarySelect}
      WHERE k.workspace_id = $1 AND k.revoked_at IS NULL AND ($2::uuid IS NULL OR k.user_id = $2)
      ORDER BY k.created_at DESC, k.id LIMIT $3`,
    values: [workspaceId, createdBy, limit],
  });
  return rows.map(toSummary);
}

export async function getApiKeySummary(db: Queryable, workspaceId: string, id: string): Promise<ApiKeySummary | null> {
  const { rows } = await db.query<SummaryRow>({
    name: 'tasks-get-api-key-summary',
    text: `${summarySelect} WHERE k.workspace_id = $1 AND k.id = $2`,
    values: [workspaceId, id],
  });
  return rows[0] ? toSummary(rows[0]) : null;
}

/** How many live keys a member holds in a workspace. */
export async function countLiveApiKeys(db: Queryable, workspaceId: string, userId: string): Promise<number> {
  const { rows } = await db.query<{ count: number }>({
    name: 'tasks-count-live-api-keys',
    text: 'SELECT count(*)::int AS count FROM api_keys WHERE workspace_id = $1 AND user_id = $2 AND revoked_at IS NULL',
    values: [workspaceId, userId],
  });
  return rows[0]?.count ?? 0;
}

/** Who created a key of the workspace (revoked or not), locked until the transaction ends; null when there is none. */
export async function lockApiKeyOwner(db: Queryable, workspaceId: string, id: string): Promise<string | null> {
  const { rows } = await db.query<{ user_id: string }>(
    'SELECT user_id FROM api_keys WHERE workspace_id = $1 AND id = $2 FOR UPDATE',
    [workspaceId, id],
  );
  return rows[0]?.user_id ?? null;
}

/**
 * Records that a key was used, unless that was already recorded within the last minute (so a busy
 * key costs one cheap UPDATE a minute at most, and a no-op WHERE otherwise).
 */
export async function touchApiKey(db: Queryable, id: string): Promise<void> {
  await db.query({
    name: 'tasks-touch-api-key',
    text: `UPDATE api_keys SET last_used_at = now()
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    values: [id],
  });
}

/** The live (not revoked) key with this hash. */
export async function findApiKeyByHash(db: Queryable, keyHash: Buffer): Promise<ApiKeyIdentity | null> {
  const { rows } = await db.query<{ id: string; workspace_id: string; name: string; user_id: string }>({
    name: 'tasks-find-api-key',
    text: 'SELECT id, workspace_id, name, user_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
    values: [keyHash],
  });
  const row = rows[0];
  return row ? { apiKeyId: row.id, workspaceId: row.workspace_id, name: row.name, userId: row.user_id } : null;
}

/** The name of a live key of the workspace (comments are attributed to it). */
export async function getApiKeyName(db: Queryable, workspaceId: string, id: string): Promise<string | null> {
  const { rows } = await db.query<{ name: string }>({
    name: 'tasks-get-api-key-name',
    text: 'SELECT name FROM api_keys WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL',
    values: [workspaceId, id],
  });
  return rows[0]?.name ?? null;
}

/** Revokes a key (idempotently); false when the workspace has no such key. */
export async function revokeApiKey(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE workspace_id = $1 AND id = $2',
    [workspaceId, id],
  );
  return rowCount === 1;
}
