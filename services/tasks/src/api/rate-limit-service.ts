import { unary, type GrpcServerMetrics, type Logger, type Pool } from '@tws/common';
import type { RateLimitServiceHandlers } from '@tws/proto-types/generated/tasks/v1/RateLimitService';
import { syncRateLimits } from '../domain/rate-limits.js';

/** tasks.v1.RateLimitService: the gateways' shared request buckets (domain/rate-limits.ts). */
export function rateLimitServiceHandlers(deps: { pool: Pool; logger: Logger; metrics: GrpcServerMetrics }): RateLimitServiceHandlers {
  const options = { service: 'tasks.v1.RateLimitService', logger: deps.logger, metrics: deps.metrics };
  return {
    SyncRateLimits: unary(
      'SyncRateLimits',
      async (request) => {
        const result = await syncRateLimits(deps.pool, {
          replicaId: request.replicaId,
          tokensPerSecond: request.tokensPerSecond,
          burst: request.burst,
          usages: request.usages.map((usage) => ({ keyHash: usage.keyHash, consumed: usage.consumed })),
        });
        return {
          buckets: result.buckets.map((bucket) => ({ keyHash: bucket.keyHash, tokens: bucket.tokens, total: String(bucket.total), created: bucket.created })),
          replicas: result.replicas,
        };
      },
      options,
    ),
  };
}
