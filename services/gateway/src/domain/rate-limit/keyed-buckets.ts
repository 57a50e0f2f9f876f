import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** One key's bucket: `tokens` at `at` (ms, performance.now()); may be negative (debt, down to −burst). */
interface Bucket {
  tokens: number;
  at: number;
  /** Requests let through here since the usage was last handed to the sync (not yet in the cluster's view). */
  pending: number;
  /** Syncs this key still takes part in without traffic here, to learn what the other replicas use. */
  follow: number;
  /** The cluster's total for the key after this replica's last sync; undefined once it stopped following it. */
  seenTotal: number | undefined;
  /** keyHash(key), computed at the key's first sync. */
  hash: string | undefined;
}

/**
 * After its last request here, a key stays in this many more syncs (5 s at the default interval), so
 * a client moving between replicas finds this one's bucket up to date when it comes back.
 */
const followSyncs = 10;

/** The outcome of one request's charge, for the RateLimit headers. */
export interface RateLimitDecision {
  allowed: boolean;
  /** Requests that would pass right now (after this one). */
  remaining: number;
  /** Whole seconds until the bucket is full again (0: full). */
  resetSeconds: number;
  /** Whole seconds until the next request passes (0 when allowed; ≥ 1 otherwise). */
  retryAfterSeconds: number;
}

/** One key's consumption handed to the sync: `hash` identifies it outside this process. */
export interface KeyUsage {
  key: string;
  hash: string;
  consumed: number;
}

/** The cluster's view of one key after a sync (tasks.v1.RateLimitBucket). */
export interface ClusterBucket {
  hash: string;
  /** The shared bucket's tokens when the sync answered. */
  tokens: number;
  /** Requests every replica reported for the key since the shared bucket was created. */
  total: number;
  /** This sync created the shared bucket: no other replica had reported the key. */
  created: boolean;
}

/** What outside this process sees of a key: a SHA-256 (credential hashes, user ids and IPs stay here). */
export const keyHash = (key: string): string => createHash('sha256').update(key).digest('hex');

const now = (): number => performance.now();

/**
 * Token buckets by key (a credential hash, a user + workspace, a client IP). A bucket holds `burst`
 * tokens and refills at `perSecond`; a bucket untouched for as long as a full refill takes is dropped,
 * which changes nothing (it would be full again), and at most `maxKeys` buckets are kept.
 *
 * Shared mode (plugins/rate-limit-sync.ts): every bucket here mirrors the cluster's bucket for its key.
 * Requests are decided here, with no network call; the requests let through are counted per key
 * (`drainUsage`), sent to the tasks service in the background, and its answer (the key's total over
 * every replica, and the shared bucket) takes the other replicas' requests off the local bucket
 * (`applyCluster`). When the sync fails, `setCost(replicas)` makes each request cost that many
 * tokens: the local limit divided by the last known replica count.
 */
export class KeyedTokenBuckets {
  private readonly buckets: LRUCache<string, Bucket> | undefined;
  /** Keys charged since their usage was last drained, oldest first (bounded by the LRU: evictions leave it). */
  private readonly dirty = new Set<string>();
  private cost = 1;
  private readonly shared: boolean;

  /** `shared`: the usage is counted for a sync (else `drainUsage` has nothing: the buckets are this replica's alone). */
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    options: { maxKeys?: number; shared?: boolean } = {},
  ) {
    const maxKeys = options.maxKeys ?? 100_000;
    this.shared = options.shared ?? false;
    if (perSecond > 0 && burst > 0) {
      // Debt (down to −burst) takes twice as long to refill: kept that long after the last touch.
      const fullRefillMs = Math.ceil(((2 * burst) / perSecond) * 1000);
      this.buckets = new LRUCache<string, Bucket>({
        max: maxKeys,
        ttl: Math.max(fullRefillMs, 1_000),
        updateAgeOnGet: true,
        dispose: (_bucket, key) => {
          this.dirty.delete(key);
        },
      });
    }
  }

  get enabled(): boolean {
    return this.buckets !== undefined;
  }

  /** The policy, for RateLimit-Policy: `burst` requests per `windowSeconds` (the time a full refill takes). */
  get policy(): { quota: number; windowSeconds: number } {
    return { quota: this.burst, windowSeconds: Math.max(1, Math.ceil(this.burst / this.perSecond)) };
  }

  /** Tokens one request costs: 1, or the last known replica count while the sync is failing. */
  setCost(cost: number): void {
    this.cost = Math.max(1, Math.floor(cost));
  }

  get requestCost(): number {
    return this.cost;
  }

  private refilled(key: string, create: boolean): Bucket | undefined {
    let bucket = this.buckets?.get(key);
    const at = now();
    if (!bucket) {
      if (!create || !this.buckets) return undefined;
      bucket = { tokens: this.burst, at, pending: 0, follow: 0, seenTotal: undefined, hash: undefined }; // a new client starts with its burst
      this.buckets.set(key, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((at - bucket.at) / 1000) * this.perSecond);
    bucket.at = at;
    return bucket;
  }

  private secondsUntil(bucket: Bucket, tokens: number): number {
    return bucket.tokens >= tokens ? 0 : Math.max(1, Math.ceil((tokens - bucket.tokens) / this.perSecond));
  }

  private describe(bucket: Bucket, allowed: boolean): RateLimitDecision {
    const full = bucket.tokens >= this.burst ? 0 : Math.ceil((this.burst - bucket.tokens) / this.perSecond);
    return {
      allowed,
      remaining: Math.max(0, Math.floor(bucket.tokens / this.cost)),
      resetSeconds: full,
      retryAfterSeconds: allowed ? 0 : this.secondsUntil(bucket, this.cost),
    };
  }

  /** Charges one request to `key`; undefined when limits are off. */
  consume(key: string): RateLimitDecision | undefined {
    const bucket = this.refilled(key, true);
    if (!bucket) return undefined;
    if (this.shared) this.dirty.add(key);
    if (bucket.tokens < this.cost) return this.describe(bucket, false);
    bucket.tokens -= this.cost;
    bucket.pending += 1;
    return this.describe(bucket, true);
  }

  /** Takes one token: 0 when allowed, otherwise the whole seconds until a token is back (≥ 1). */
  take(key: string): number {
    return this.consume(key)?.retryAfterSeconds ?? 0;
  }

  /** Gives back a token taken earlier (a reservation that turned out not to count), up to the burst. */
  refund(key: string): void {
    const bucket = this.refilled(key, false);
    if (!bucket) return;
    bucket.tokens = Math.min(this.burst, bucket.tokens + this.cost);
    if (bucket.pending > 0) bucket.pending -= 1;
  }

  /** Without taking anything: 0 when a token is available, otherwise the seconds to wait. */
  waitSeconds(key: string): number {
    const bucket = this.refilled(key, false);
    return bucket ? this.secondsUntil(bucket, this.cost) : 0;
  }

  /**
   * Keys charged since the last drain, and keys charged within the last few syncs (at most `max`,
   * oldest first), with the requests let through since the last drain; resets their count.
   */
  drainUsage(max: number): KeyUsage[] {
    const usages: KeyUsage[] = [];
    const again: string[] = [];
    for (const key of this.dirty) {
      if (usages.length >= max) break;
      this.dirty.delete(key);
      const bucket = this.buckets?.peek(key);
      if (!bucket) continue;
      bucket.hash ??= keyHash(key);
      usages.push({ key, hash: bucket.hash, consumed: bucket.pending });
      bucket.follow = bucket.pending > 0 ? followSyncs : bucket.follow - 1;
      bucket.pending = 0;
      if (bucket.follow > 0) again.push(key);
      // Not in every sync from now on: the next one cannot tell the others' usage from its total.
      else bucket.seenTotal = undefined;
    }
    for (const key of again) this.dirty.add(key);
    return usages;
  }

  /** A sync that failed: its usage counts again at the next one (double-counting beats forgetting). */
  restoreUsage(usages: readonly KeyUsage[]): void {
    for (const usage of usages) {
      const bucket = this.buckets?.peek(usage.key);
      if (!bucket) continue;
      bucket.pending += usage.consumed;
      this.dirty.add(usage.key);
    }
  }

  /**
   * The cluster's view after a sync. A key this replica synced last time too: the other replicas'
   * requests since then (the total's growth, less this replica's own) are taken from the local bucket,
   * which otherwise keeps its exact refill — one replica alone behaves as an unshared bucket. A key
   * the others used while this replica was not following it: the shared bucket (less what was let
   * through here since the drain) when it has fewer tokens. A key the sync created: nobody else used it.
   */
  applyCluster(usages: readonly KeyUsage[], cluster: readonly ClusterBucket[]): void {
    const byHash = new Map(cluster.map((bucket) => [bucket.hash, bucket]));
    for (const usage of usages) {
      const shared = byHash.get(usage.hash);
      if (!shared || !Number.isFinite(shared.tokens) || !Number.isSafeInteger(shared.total)) continue;
      const bucket = this.refilled(usage.key, false);
      if (!bucket) continue;
      const seen = bucket.seenTotal;
      if (!shared.created) {
        const others = seen === undefined ? undefined : shared.total - seen - usage.consumed;
        if (others !== undefined && others >= 0) bucket.tokens -= others;
        else bucket.tokens = Math.min(bucket.tokens, shared.tokens - bucket.pending * this.cost);
        bucket.tokens = Math.max(-this.burst, bucket.tokens);
      }
      bucket.seenTotal = shared.total;
    }
  }
}
