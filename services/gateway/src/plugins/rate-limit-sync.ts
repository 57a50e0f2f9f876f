import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { PeriodicJob, type Logger } from '@tws/common';
import type { GatewayConfig } from '../config.js';
import { RateLimitSync, type RateLimitSyncMetrics } from '../domain/rate-limit/sync.js';

/**
 * The request limit shared by every gateway replica (docs/api.md "Rate limits"): every
 * RATE_LIMIT_SYNC_INTERVAL_MS, this replica's per-key usage goes to tasks.v1.RateLimitService and
 * the cluster's buckets come back (domain/rate-limit/sync.ts). Requests never wait for it. Off when
 * the limit is off or RATE_LIMIT_SYNC_INTERVAL_MS=0 (each replica then limits alone).
 */
async function rateLimitSyncPlugin(app: FastifyInstance, options: { config: GatewayConfig; metrics: RateLimitSyncMetrics; logger: Logger }): Promise<void> {
  const { config } = options;
  const buckets = app.rateLimits.requests;
  const intervalMs = config.RATE_LIMIT_SYNC_INTERVAL_MS;
  if (!buckets.enabled || intervalMs === 0) return;
  // A sync slower than this is given up (and its usage sent again): a stuck call must not freeze the limit.
  const deadlineMs = Math.min(config.GRPC_DEADLINE_MS, Math.max(1_000, 2 * intervalMs));
  const api = app.rateLimitsApi;
  const logger = options.logger.child({ component: 'rate-limit-sync' });
  const sync = new RateLimitSync({
    buckets,
    replicaId: randomUUID(),
    policy: { perSecond: config.RATE_LIMIT_PER_SECOND, burst: config.RATE_LIMIT_BURST },
    maxKeys: config.RATE_LIMIT_SYNC_MAX_KEYS,
    logger,
    metrics: options.metrics,
    send: async (call) => {
      const answer = await api.SyncRateLimits(call, { deadlineMs });
      const buckets = answer.buckets.map((bucket) => ({ keyHash: bucket.keyHash, tokens: bucket.tokens, total: Number(bucket.total), created: bucket.created }));
      return { buckets, replicas: answer.replicas };
    },
  });
  const job = new PeriodicJob({ name: 'rate-limit sync', intervalMs, run: () => sync.syncOnce(), logger });
  app.addHook('onReady', async () => job.start());
  // A sync in flight when the app closes finishes (or fails fast on a closed channel) before close returns.
  app.addHook('onClose', async () => job.stop());
}

export default fp(rateLimitSyncPlugin, { name: 'rate-limit-sync', dependencies: ['rate-limit', 'backends'] });
