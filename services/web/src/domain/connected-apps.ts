import type { Pool } from '@tws/common';
import { deleteExpiredOAuthRows, listGrants, revokeGrantOf, type GrantRow } from '../store/oauth-models.js';
import { oauthTtl } from './oauth-provider.js';

/** Most connected apps listed for a person. */
export const maxConnectedApps = 200;

/**
 * A person's OAuth grants ("connected apps"): listed, revoked, and the authorization server's
 * expired rows swept.
 *
 * Revocation hook for the resource servers: a revoked grant's id is written to
 * web.oauth_revoked_grants (here, and by the adapter when oidc-provider revokes a grant itself:
 * a rotated refresh token reused, RFC 7009). Its refresh tokens are gone at once; its access
 * tokens (JWTs carrying `grant_id`) are refused by every gateway replica from the next request:
 * the one hook every revocation passes through (plugins/oauth.ts `grantRevoked`) pushes it, as
 * revoked API keys are pushed.
 */
export class ConnectedApps {
  constructor(
    private readonly pool: Pool,
    /** Called once per grant revoked here, after it is recorded (plugins/oauth.ts `grantRevoked`). */
    private readonly onRevoked: (grantId: string, actorUserId: string) => Promise<void>,
  ) {}

  list(userId: string): Promise<GrantRow[]> {
    return listGrants(this.pool, userId, maxConnectedApps);
  }

  /** False when the person has no such grant (another person's grant included). */
  async revoke(userId: string, grantId: string): Promise<boolean> {
    const revoked = await revokeGrantOf(this.pool, userId, grantId);
    if (revoked) await this.onRevoked(grantId, userId);
    return revoked;
  }

  /** Deletes expired rows and revoked-grant records older than a day (every access token of the grant expired long before). */
  async sweep(batch = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await deleteExpiredOAuthRows(this.pool, Math.max(86_400, oauthTtl.AccessToken * 2), batch);
      total += deleted;
      if (deleted < batch) return total;
    }
  }
}
