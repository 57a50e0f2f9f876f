import type { Queryable } from '@tws/common';

export interface ApiKeyIdentity {
  apiKeyId: string;
  workspaceId: string;
  name: string;
  userId: string;
}

export async function insertApiKey(
  db: Queryable,
  input: { workspaceId: string; userId: string; name: string; keyHash: Buffer },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO api_keys (workspace_id, user_id, name, key_hash) VALUES ($1, $2, $3, $4) RETURNING id',
    [input.workspaceId, input.userId, input.name, input.keyHash],
  );
  return rows[0]!.id;
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
