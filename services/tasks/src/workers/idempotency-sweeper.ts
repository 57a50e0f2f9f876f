import { PeriodicJob, type Logger, type Pool } from '@tws/common';
import { deleteExpiredKeys } from '../store/idempotency.js';

const chunk = 1000;
/** Chunks deleted per run at most: a backlog is worked off over several runs, never in one long one. */
const maxChunks = 100;

/**
 * Deletes expired Idempotency-Key rows, a chunk at a time, every `intervalMs` (any replica may run it:
 * deleting is idempotent, and Begin treats an expired row as absent whether or not it was swept yet).
 */
export function idempotencySweeper(options: { pool: Pool; intervalMs: number; logger: Logger }): PeriodicJob {
  return new PeriodicJob({
    name: 'idempotency key sweep',
    intervalMs: options.intervalMs,
    logger: options.logger,
    async run() {
      let deleted = 0;
      for (let round = 0, count = chunk; count === chunk && round < maxChunks; round++) {
        count = await deleteExpiredKeys(options.pool, chunk);
        deleted += count;
      }
      if (deleted > 0) options.logger.info({ deleted }, 'expired idempotency keys deleted');
    },
  });
}
