import { invalid, type Pool } from '@tws/common';
import { z } from 'zod';
import { applyUsage, forgetIdle, touchReplica } from '../store/rate-limits.js';

/** The most keys one sync may carry (the gateway's RATE_LIMIT_SYNC_MAX_KEYS is at most this). */
export const maxSyncKeys = 10_000;

const syncRequest = z.object({
  replicaId: z.string().min(1).max(64),
  tokensPerSecond: z.number().positive().max(1_000_000),
  burst: z.number().int().min(1).max(1_000_000),
  usages: z
    .array(z.object({ keyHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a lower-case hex SHA-256'), consumed: z.number().int().min(0).max(1_000_000) }))
    .max(maxSyncKeys, `at most ${maxSyncKeys} keys per sync`)
    .refine((usages) => new Set(usages.map((usage) => usage.keyHash)).size === usages.length, 'each key at most once'),
});

export type SyncRequest = z.input<typeof syncRequest>;

export interface SyncResult {
  buckets: { keyHash: string; tokens: number; total: number; created: boolean }[];
  replicas: number;
}

/**
 * One gateway replica's sync (tasks.v1.RateLimitService.SyncRateLimits): its usage applied to the
 * shared buckets, which it gets back, and the count of live replicas. Idle buckets are forgotten on the way.
 */
export async function syncRateLimits(pool: Pool, request: SyncRequest): Promise<SyncResult> {
  const parsed = syncRequest.safeParse(request);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(`${issue?.path.join('.') || 'request'}: ${issue?.message ?? 'is invalid'}`);
  }
  const { replicaId, tokensPerSecond, burst, usages } = parsed.data;
  const tokens = await applyUsage(pool, usages, { perSecond: tokensPerSecond, burst });
  const replicas = await touchReplica(pool, replicaId);
  // A debt of −burst is back to full after 2 × burst / rate; a minute at least.
  await forgetIdle(pool, Math.max(60, Math.ceil((2 * burst) / tokensPerSecond)));
  return {
    buckets: usages.flatMap((usage) => {
      const bucket = tokens.get(usage.keyHash);
      return bucket === undefined ? [] : [{ keyHash: usage.keyHash, ...bucket }];
    }),
    replicas,
  };
}
