import { LRUCache } from 'lru-cache';

/**
 * Remembers successful lookups for a fixed time after they were made (not extended by use, so a
 * revoked credential stops working at most `ttlMs` later) and shares one in-flight lookup between
 * concurrent callers of the same key. Failures are never cached. `ttlMs` 0 disables remembering.
 */
export class LookupCache<V extends object> {
  private readonly cache: LRUCache<string, V> | undefined;
  private readonly inflight = new Map<string, Promise<V>>();

  constructor(ttlMs: number, maxEntries = 50_000) {
    this.cache = ttlMs > 0 ? new LRUCache<string, V>({ max: maxEntries, ttl: ttlMs, updateAgeOnGet: false }) : undefined;
  }

  /** The remembered value, without loading. */
  peek(key: string): V | undefined {
    return this.cache?.get(key);
  }

  /** True while a lookup of `key` is in flight (a `get` now would join it instead of loading). */
  isLoading(key: string): boolean {
    return this.inflight.has(key);
  }

  get(key: string, load: () => Promise<V>): Promise<V> | V {
    const hit = this.cache?.get(key);
    if (hit !== undefined) return hit;
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const loading = load().then(
      (value) => {
        this.inflight.delete(key);
        this.cache?.set(key, value);
        return value;
      },
      (error: unknown) => {
        this.inflight.delete(key);
        throw error;
      },
    );
    this.inflight.set(key, loading);
    return loading;
  }

  /** Remembers a value for `ttlMs` at most (shorter when the value itself expires earlier). */
  set(key: string, value: V, ttlMs?: number): void {
    this.cache?.set(key, value, ttlMs === undefined ? undefined : { ttl: ttlMs });
  }

  clear(): void {
    this.cache?.clear();
  }
}
