import type { Adapter, AdapterPayload } from 'oidc-provider';
import { inTransaction, type Pool, type Queryable } from '@tws/common';

/** How long a registered client is kept without a grant (after its registration, or after its latest grant ends). */
export const clientUnusedTtlSeconds = 30 * 86_400;

/**
 * oidc-provider's storage on Postgres (table web.oauth_models, migration 002): one instance per
 * model name (Client, Grant, AuthorizationCode, RefreshToken, Session, Interaction…). Rows past
 * their expiry are treated as absent and deleted by the sweeper (workers/session-sweeper.ts).
 */
export class PostgresAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly pool: Pool,
    /** Called with each grant id revoked by oidc-provider (reused refresh token, RFC 7009 revocation). */
    private readonly onGrantRevoked: (grantId: string) => Promise<void>,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const grantId = payload.grantId ?? (this.model === 'Grant' ? id : null);
    const accountId = this.model === 'Grant' ? (payload.accountId ?? null) : null;
    // oidc-provider keeps clients forever; a dynamically registered one here lives CLIENT_UNUSED_TTL
    // after its registration or after the end of its latest grant, so abandoned registrations go.
    if (this.model === 'Client') expiresIn = clientUnusedTtlSeconds;
    if (this.model === 'Grant' && payload.clientId && expiresIn > 0) {
      await this.pool.query({
        name: 'web-oauth-extend-client',
        text: `UPDATE oauth_models SET expires_at = GREATEST(expires_at, now() + make_interval(secs => $2::int + $3::int))
          WHERE model = 'Client' AND id = $1 AND expires_at IS NOT NULL`,
        values: [payload.clientId, Math.ceil(expiresIn), clientUnusedTtlSeconds],
      });
    }
    await this.pool.query({
      name: 'web-oauth-upsert',
      text: `INSERT INTO oauth_models (model, id, payload, grant_id, uid, account_id, expires_at)
        VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(secs => $7::int) END)
        ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
          uid = EXCLUDED.uid, account_id = EXCLUDED.account_id, expires_at = EXCLUDED.expires_at`,
      values: [this.model, id, JSON.stringify(payload), grantId, payload.uid ?? null, accountId, expiresIn > 0 ? Math.ceil(expiresIn) : null],
    });
  }

  private async findWhere(column: 'id' | 'uid', value: string): Promise<AdapterPayload | undefined> {
    const { rows } = await this.pool.query<{ payload: AdapterPayload; consumed: number | null }>({
      name: `web-oauth-find-by-${column}`,
      text: `SELECT payload, extract(epoch FROM consumed_at)::bigint AS consumed FROM oauth_models
        WHERE model = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > now()) LIMIT 1`,
      values: [this.model, value],
    });
    const row = rows[0];
    if (!row) return undefined;
    return row.consumed === null ? row.payload : { ...row.payload, consumed: Number(row.consumed) };
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('id', id);
  }

  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('uid', uid);
  }

  findByUserCode(): Promise<AdapterPayload | undefined> {
    // The device flow is not enabled: there are no user codes.
    return Promise.resolve(undefined);
  }

  async consume(id: string): Promise<void> {
    await this.pool.query({
      name: 'web-oauth-consume',
      text: 'UPDATE oauth_models SET consumed_at = now() WHERE model = $1 AND id = $2',
      values: [this.model, id],
    });
  }

  async destroy(id: string): Promise<void> {
    await this.pool.query({ name: 'web-oauth-destroy', text: 'DELETE FROM oauth_models WHERE model = $1 AND id = $2', values: [this.model, id] });
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    // oidc-provider calls this once per model: record the grant once, then drop this model's rows.
    await this.onGrantRevoked(grantId);
    await this.pool.query({
      name: 'web-oauth-revoke-model-grant',
      text: 'DELETE FROM oauth_models WHERE model = $1 AND grant_id = $2',
      values: [this.model, grantId],
    });
  }
}

/** Records a revoked grant (idempotent): what the resource servers' refusal reads. True when it was not recorded yet. */
export async function recordRevokedGrant(db: Queryable, grantId: string, accountId: string | null): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'web-oauth-record-revoked-grant',
    text: 'INSERT INTO oauth_revoked_grants (grant_id, account_id) VALUES ($1, $2) ON CONFLICT (grant_id) DO NOTHING',
    values: [grantId, accountId],
  });
  return rowCount === 1;
}

/** One connected app of a person: a live grant with its client's name. */
export interface GrantRow {
  grantId: string;
  clientId: string;
  clientName: string | undefined;
  /** The scopes granted per resource (`{ "<base_url>": "read write" }`). */
  resources: Record<string, string>;
  grantedAt: Date;
}

interface GrantPayload {
  clientId?: string;
  resources?: Record<string, string>;
  iat?: number;
}

/** The person's live grants, newest first (at most `limit`). */
export async function listGrants(db: Queryable, accountId: string, limit: number): Promise<GrantRow[]> {
  const { rows } = await db.query<{ id: string; payload: GrantPayload; client_name: string | null }>({
    name: 'web-oauth-list-grants',
    text: `SELECT g.id, g.payload, c.payload->>'client_name' AS client_name
      FROM oauth_models g
      LEFT JOIN oauth_models c ON c.model = 'Client' AND c.id = g.payload->>'clientId'
      WHERE g.model = 'Grant' AND g.account_id = $1 AND (g.expires_at IS NULL OR g.expires_at > now())
      ORDER BY (g.payload->>'iat')::bigint DESC NULLS LAST LIMIT $2`,
    values: [accountId, limit],
  });
  return rows.map((row) => ({
    grantId: row.id,
    clientId: row.payload.clientId ?? '',
    clientName: row.client_name ?? undefined,
    resources: row.payload.resources ?? {},
    grantedAt: new Date((row.payload.iat ?? 0) * 1000),
  }));
}

/**
 * Revokes a grant of this person: records it, then deletes it with every code and refresh token
 * issued under it, in one transaction. Answers false when the person has no such grant.
 */
export async function revokeGrantOf(pool: Pool, accountId: string, grantId: string): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const { rowCount } = await client.query({
      name: 'web-oauth-delete-own-grant',
      text: `DELETE FROM oauth_models WHERE model = 'Grant' AND id = $1 AND account_id = $2`,
      values: [grantId, accountId],
    });
    if (!rowCount) return false;
    await recordRevokedGrant(client, grantId, accountId);
    await client.query({ name: 'web-oauth-delete-grant-rows', text: 'DELETE FROM oauth_models WHERE grant_id = $1', values: [grantId] });
    return true;
  });
}

/** Deletes up to `batch` expired rows and revoked-grant records older than `keepRevokedSeconds`. */
export async function deleteExpiredOAuthRows(db: Queryable, keepRevokedSeconds: number, batch: number): Promise<number> {
  const expired = await db.query({
    name: 'web-oauth-delete-expired',
    text: `DELETE FROM oauth_models WHERE ctid IN (
        SELECT ctid FROM oauth_models WHERE expires_at <= now() LIMIT $1)`,
    values: [batch],
  });
  const revoked = await db.query({
    name: 'web-oauth-delete-old-revoked',
    text: `DELETE FROM oauth_revoked_grants WHERE grant_id IN (
        SELECT grant_id FROM oauth_revoked_grants WHERE revoked_at <= now() - make_interval(secs => $1) LIMIT $2)`,
    values: [keepRevokedSeconds, batch],
  });
  return (expired.rowCount ?? 0) + (revoked.rowCount ?? 0);
}

/** The gateways applied this revoked grant (AnnounceGrantRevocation answered). */
export async function markGrantAnnounced(db: Queryable, grantId: string): Promise<void> {
  await db.query({ name: 'web-oauth-grant-announced', text: 'UPDATE oauth_revoked_grants SET announced_at = now() WHERE grant_id = $1', values: [grantId] });
}

/** Revoked grants not yet announced to the gateways, revoked less than `withinSeconds` ago (oldest first, at most `limit`). */
export async function unannouncedGrants(
  db: Queryable,
  withinSeconds: number,
  limit: number,
): Promise<Array<{ grantId: string; accountId: string | null; revokedAt: Date }>> {
  const { rows } = await db.query<{ grant_id: string; account_id: string | null; revoked_at: Date }>({
    name: 'web-oauth-unannounced-grants',
    text: `SELECT grant_id, account_id, revoked_at FROM oauth_revoked_grants
            WHERE announced_at IS NULL AND revoked_at > now() - make_interval(secs => $1)
            ORDER BY revoked_at LIMIT $2`,
    values: [withinSeconds, limit],
  });
  return rows.map((row) => ({ grantId: row.grant_id, accountId: row.account_id, revokedAt: row.revoked_at }));
}
