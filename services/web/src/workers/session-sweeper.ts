import { PeriodicJob, type Logger } from '@tws/common';
import type { Sessions } from '../domain/sessions.js';

/** Deletes ended sessions every SESSION_SWEEP_INTERVAL_MS (lookups refuse them before that anyway). */
export function sessionSweeper(sessions: Sessions, intervalMs: number, logger: Logger): PeriodicJob {
  return new PeriodicJob({
    name: 'session sweep',
    intervalMs,
    logger,
    run: async () => {
      const deleted = await sessions.sweep();
      if (deleted > 0) logger.info({ deleted }, 'ended sessions deleted');
    },
  });
}
