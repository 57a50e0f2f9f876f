import { PeriodicJob, type Logger } from '@tws/common';
import type { EndpointHealth } from '../domain/delivery/endpoint-health.js';
import type { EndpointStore } from '../store/endpoints.js';

export interface EndpointUpkeepOptions {
  endpoints: EndpointStore;
  health: EndpointHealth;
  logger: Logger;
  /** How often attempt outcomes are written (and auto-disable checked). */
  healthFlushMs?: number;
  /** How often rotated-out secrets past their overlap are deleted. */
  secretSweepMs?: number;
}

/**
 * Two small periodic jobs every replica runs (both idempotent): writing the attempt outcomes the
 * pipeline collected (auto-disable), and deleting rotated-out secrets whose overlap is over (the
 * pipeline already stops using them at the expiry; this removes them from the database).
 */
export function endpointUpkeep(options: EndpointUpkeepOptions): { start(): void; stop(): Promise<void> } {
  const { endpoints, health, logger } = options;
  const healthJob = new PeriodicJob({
    name: 'webhook endpoint health',
    intervalMs: options.healthFlushMs ?? 1_000,
    logger,
    run: async () => {
      await health.flush();
    },
  });
  const secretJob = new PeriodicJob({
    name: 'rotated-out webhook secrets',
    intervalMs: options.secretSweepMs ?? 5_000,
    logger,
    run: async () => {
      const forgotten = await endpoints.forgetExpiredSecrets();
      if (forgotten > 0) logger.info({ forgotten }, 'rotated-out webhook secrets deleted after their overlap');
    },
  });
  return {
    start() {
      healthJob.start();
      secretJob.start();
    },
    async stop() {
      await Promise.all([healthJob.stop(), secretJob.stop()]);
      // The outcomes of the last attempts (after the consumers stopped).
      await health.flush().catch((error: unknown) => logger.warn({ err: error }, 'last endpoint health flush failed'));
    },
  };
}
