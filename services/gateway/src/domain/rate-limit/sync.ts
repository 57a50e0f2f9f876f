import type { ClusterBucket, KeyedTokenBuckets } from './keyed-buckets.js';

/** One sync's request and answer, as tasks.v1.RateLimitService.SyncRateLimits carries them. */
export interface SyncCall {
  replicaId: string;
  tokensPerSecond: number;
  burst: number;
  usages: { keyHash: string; consumed: number }[];
}
export interface SyncAnswer {
  buckets: { keyHash: string; tokens: number; total: number; created: boolean }[];
  replicas: number;
}

export interface RateLimitSyncMetrics {
  /** Syncs by outcome (`ok`, `error`). */
  syncs: { inc(labels: { outcome: 'ok' | 'error' }): void };
  /** 1 while the limit is shared, 0 while each request costs the last known replica count instead. */
  shared: { set(value: number): void };
  /** Live gateway replicas, as the last sync reported them. */
  replicas: { set(value: number): void };
}

export interface RateLimitSyncOptions {
  buckets: KeyedTokenBuckets;
  send: (call: SyncCall) => Promise<SyncAnswer>;
  replicaId: string;
  policy: { perSecond: number; burst: number };
  maxKeys: number;
  logger: { warn(fields: object, message: string): void; info(fields: object, message: string): void };
  metrics?: RateLimitSyncMetrics;
}

/**
 * One replica's side of the shared limit: `syncOnce` (run every RATE_LIMIT_SYNC_INTERVAL_MS, never two
 * at once) sends the requests let through per key since the previous sync, at most `maxKeys` keys (the
 * others wait for the next one), and applies the shared buckets it gets back. A failed sync never fails
 * a request: its usage is sent again next time, and until a sync succeeds each request costs the last
 * known replica count (the local limit divided by it).
 */
export class RateLimitSync {
  private replicas = 1;
  private shared = true;

  constructor(private readonly options: RateLimitSyncOptions) {}

  /** Live replicas as last reported (the divisor while the sync fails). */
  get lastKnownReplicas(): number {
    return this.replicas;
  }

  async syncOnce(): Promise<void> {
    const { buckets, policy } = this.options;
    const usages = buckets.drainUsage(this.options.maxKeys);
    let answer: SyncAnswer;
    try {
      answer = await this.options.send({
        replicaId: this.options.replicaId,
        tokensPerSecond: policy.perSecond,
        burst: policy.burst,
        usages: usages.map((usage) => ({ keyHash: usage.hash, consumed: usage.consumed })),
      });
    } catch (error) {
      buckets.restoreUsage(usages);
      buckets.setCost(this.replicas);
      this.options.metrics?.syncs.inc({ outcome: 'error' });
      this.options.metrics?.shared.set(0);
      if (this.shared) {
        this.options.logger.warn({ err: error, replicas: this.replicas }, 'rate-limit sync failed: limiting locally at 1/replicas of the limit until it works again');
      }
      this.shared = false;
      return;
    }
    const cluster: ClusterBucket[] = answer.buckets.map((bucket) => ({ hash: bucket.keyHash, tokens: bucket.tokens, total: bucket.total, created: bucket.created }));
    buckets.applyCluster(usages, cluster);
    this.replicas = Math.max(1, answer.replicas);
    buckets.setCost(1);
    this.options.metrics?.syncs.inc({ outcome: 'ok' });
    this.options.metrics?.shared.set(1);
    this.options.metrics?.replicas.set(this.replicas);
    if (!this.shared) this.options.logger.info({ replicas: this.replicas }, 'rate-limit sync works again: the limit is shared');
    this.shared = true;
  }
}
