import { PeriodicJob, type Logger } from '@tws/common';
import type { ConnectedApps } from '../domain/connected-apps.js';
import type { GrantRevocationAnnouncer } from '../domain/grant-revocations.js';
import type { Sessions } from '../domain/sessions.js';

/**
 * Deletes ended sessions and the authorization server's expired rows (codes, refresh tokens,
 * grants, interactions; old revoked-grant records) every SESSION_SWEEP_INTERVAL_MS. Lookups
 * refuse them before that anyway. Also announces to the gateways the revoked grants that never
 * were (domain/grant-revocations.ts `resume`).
 */
export function sessionSweeper(
  sessions: Sessions,
  connectedApps: ConnectedApps,
  intervalMs: number,
  logger: Logger,
  grantRevocations?: GrantRevocationAnnouncer,
): PeriodicJob {
  return new PeriodicJob({
    name: 'session sweep',
    intervalMs,
    logger,
    run: async () => {
      const deleted = await sessions.sweep();
      if (deleted > 0) logger.info({ deleted }, 'ended sessions deleted');
      const oauthDeleted = await connectedApps.sweep();
      if (oauthDeleted > 0) logger.info({ deleted: oauthDeleted }, 'expired authorization server rows deleted');
      const resumed = (await grantRevocations?.resume()) ?? 0;
      if (resumed > 0) logger.info({ announced: resumed }, 'revoked grants announced to the gateways after all');
    },
  });
}
