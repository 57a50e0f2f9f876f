import { LRUCache } from 'lru-cache';

export interface LookupCacheOptions<V> {
  maxEntries?: number;
  /**
   * A revocable cache: each entry is indexed under the tags this returns (e.g. `key:<id>`), so
   * `invalidate(tag)` drops exactly the entries a revocation concerns, in time proportional to their
   * number (not to the cache's size). Such a cache starts untrusted (see `setTrusted`).
   */
  tags?: (value: V) => readonly string[];
}

/**
 * Remembers successful lookups for a fixed time after they were made (not extended by use) and
 * shares one in-flight lookup between concurrent callers of the same key. Failures are never cached.
 * `ttlMs` 0 disables remembering.
 *
 * A revocable cache (`tags` given) is trusted only while revocations reach it (the gateway's
 * revocation stream is ready): untrusted, it neither answers from nor stores into memory, so every
 * call looks up. Any change of trust, `invalidate` and `clear` start a new epoch: lookups that were
 * in flight may have read the database before the revocation, so their results are handed to their
 * callers but not stored, and later callers do not join them.
 */
export class LookupCache<V extends object> {
  private readonly cache: LRUCache<string, V> | undefined;
  private inflight = new Map<string, Promise<V>>();
  private readonly tagsOf: ((value: V) => readonly string[]) | undefined;
  /** tag → keys of the entries carrying it (revocable caches only). */
  private readonly index = new Map<string, Set<string>>();
  private trusted: boolean;
  private epoch = 0;

  constructor(ttlMs: number, options: LookupCacheOptions<V> | number = {}) {
    const { maxEntries = 50_000, tags } = typeof options === 'number' ? { maxEntries: options } : options;
    this.tagsOf = tags;
    this.trusted = tags === undefined;
    this.cache =
      ttlMs > 0
        ? new LRUCache<string, V>({
            max: maxEntries,
            ttl: ttlMs,
            updateAgeOnGet: false,
            ...(tags ? { dispose: (value: V, key: string) => this.unindex(key, value) } : {}),
          })
        : undefined;
  }

  /** The remembered value, without loading (nothing while untrusted). */
  peek(key: string): V | undefined {
    return this.trusted ? this.cache?.get(key) : undefined;
  }

  /** True while a lookup of `key` is in flight (a `get` now would join it instead of loading). */
  isLoading(key: string): boolean {
    return this.inflight.has(key);
  }

  get(key: string, load: () => Promise<V>): Promise<V> | V {
    const hit = this.peek(key);
    if (hit !== undefined) return hit;
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const epoch = this.epoch;
    const inflight = this.inflight;
    const loading = load().then(
      (value) => {
        if (inflight.get(key) === loading) inflight.delete(key);
        if (epoch === this.epoch) this.store(key, value);
        return value;
      },
      (error: unknown) => {
        if (inflight.get(key) === loading) inflight.delete(key);
        throw error;
      },
    );
    inflight.set(key, loading);
    return loading;
  }

  /** Remembers a value for `ttlMs` at most (shorter when the value itself expires earlier). */
  set(key: string, value: V, ttlMs?: number): void {
    this.store(key, value, ttlMs);
  }

  /** Drops every entry carrying `tag` (and starts a new epoch). */
  invalidate(tag: string): number {
    this.newEpoch();
    const keys = this.index.get(tag);
    if (!keys) return 0;
    const count = keys.size;
    // Deleting disposes the entry, which unindexes it (from this set too): iterate over a copy.
    for (const key of [...keys]) this.cache?.delete(key);
    this.index.delete(tag);
    return count;
  }

  /**
   * Trusted: revocations reach this cache, so it may answer from memory. Turning trust off clears
   * it; either change starts a new epoch.
   */
  setTrusted(trusted: boolean): void {
    if (trusted === this.trusted) return;
    this.trusted = trusted;
    if (trusted) this.newEpoch();
    else this.clear();
  }

  isTrusted(): boolean {
    return this.trusted;
  }

  clear(): void {
    this.newEpoch();
    this.cache?.clear();
    this.index.clear();
  }

  /** Entries currently indexed under `tag` (tests and diagnostics). */
  tagged(tag: string): number {
    return this.index.get(tag)?.size ?? 0;
  }

  private newEpoch(): void {
    this.epoch += 1;
    // Lookups in flight finish for their callers; new callers start their own.
    if (this.inflight.size > 0) this.inflight = new Map();
  }

  private store(key: string, value: V, ttlMs?: number): void {
    if (!this.cache || !this.trusted) return;
    this.cache.set(key, value, ttlMs === undefined ? undefined : { ttl: ttlMs });
    // After set: replacing an entry disposes the old value (unindexing it) inside `set`.
    if (this.tagsOf) {
      for (const tag of this.tagsOf(value)) {
        let keys = this.index.get(tag);
        if (!keys) this.index.set(tag, (keys = new Set()));
        keys.add(key);
      }
    }
  }

  private unindex(key: string, value: V): void {
    for (const tag of this.tagsOf?.(value) ?? []) {
      const keys = this.index.get(tag);
      if (!keys) continue;
      keys.delete(key);
      if (keys.size === 0) this.index.delete(tag);
    }
  }
}
