import { describe, expect, test } from 'vitest';
import { LookupCache } from './lookup-cache.js';

interface Entry {
  id: string;
  member: string;
}

const tags = (entry: Entry): string[] => [`key:${entry.id}`, `member:${entry.member}`];

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

describe('LookupCache: the revocation index', () => {
  function trustedCache(ttlMs = 60_000, maxEntries?: number): LookupCache<Entry> {
    const cache = new LookupCache<Entry>(ttlMs, { tags, ...(maxEntries ? { maxEntries } : {}) });
    cache.setTrusted(true);
    return cache;
  }

  test('invalidate(tag) evicts exactly the entries carrying the tag', async () => {
    const cache = trustedCache();
    await cache.get('h1', async () => ({ id: 'k1', member: 'w:u1' }));
    await cache.get('h2', async () => ({ id: 'k2', member: 'w:u1' }));
    await cache.get('h3', async () => ({ id: 'k3', member: 'w:u2' }));
    expect(cache.invalidate('key:k1')).toBe(1);
    expect(cache.peek('h1')).toBeUndefined();
    expect(cache.peek('h2')).toEqual({ id: 'k2', member: 'w:u1' });
    // A membership tag reaches every key of that member, and only theirs.
    expect(cache.invalidate('member:w:u1')).toBe(1);
    expect(cache.peek('h2')).toBeUndefined();
    expect(cache.peek('h3')).toEqual({ id: 'k3', member: 'w:u2' });
    expect(cache.invalidate('key:unknown')).toBe(0);
  });

  test('the index follows the cache: LRU eviction, replacement and clear leave no stale tags', async () => {
    const cache = trustedCache(60_000, 2);
    cache.set('h1', { id: 'k1', member: 'w:u1' });
    cache.set('h2', { id: 'k2', member: 'w:u1' });
    cache.set('h3', { id: 'k3', member: 'w:u1' }); // evicts h1
    expect(cache.tagged('key:k1')).toBe(0);
    expect(cache.tagged('member:w:u1')).toBe(2);
    cache.set('h2', { id: 'k2b', member: 'w:u9' }); // replaces h2's value
    expect(cache.tagged('key:k2')).toBe(0);
    expect(cache.tagged('key:k2b')).toBe(1);
    expect(cache.tagged('member:w:u1')).toBe(1);
    cache.clear();
    expect(cache.tagged('member:w:u1')).toBe(0);
    expect(cache.tagged('key:k2b')).toBe(0);
  });

  test('invalidation stays O(entries of the tag) with 50,000 entries cached', () => {
    const cache = trustedCache(60_000, 50_000);
    for (let n = 0; n < 50_000; n++) cache.set(`h${n}`, { id: `k${n}`, member: `w:u${n % 1000}` });
    const started = performance.now();
    for (let n = 0; n < 1_000; n++) cache.invalidate(`key:k${n}`);
    const perEviction = (performance.now() - started) / 1_000;
    expect(cache.peek('h0')).toBeUndefined();
    expect(cache.peek('h1000')).toBeDefined();
    // A scan of 50,000 entries would take far longer than this per eviction.
    expect(perEviction).toBeLessThan(0.5);
  });

  test('a lookup in flight when a revocation arrives is handed to its callers but not stored, and not joined', async () => {
    const cache = trustedCache();
    const first = deferred<Entry>();
    let loads = 0;
    const load = (): Promise<Entry> => {
      loads += 1;
      return loads === 1 ? first.promise : Promise.resolve({ id: 'k1', member: 'w:u1' });
    };
    const before = cache.get('h1', load);
    cache.invalidate('key:other'); // any revocation: the load may have read the database before it
    const after = cache.get('h1', load); // does not join the old lookup
    expect(loads).toBe(2);
    first.resolve({ id: 'k1', member: 'w:u1' });
    await expect(before).resolves.toEqual({ id: 'k1', member: 'w:u1' });
    await after;
    // Only the lookup that started after the revocation was stored.
    expect(cache.tagged('key:k1')).toBe(1);
    cache.invalidate('key:k1');
    expect(cache.peek('h1')).toBeUndefined();
  });

  test('untrusted: no answers from memory and nothing stored; losing trust clears', async () => {
    const cache = new LookupCache<Entry>(60_000, { tags });
    expect(cache.isTrusted()).toBe(false);
    let loads = 0;
    const load = async (): Promise<Entry> => {
      loads += 1;
      return { id: 'k1', member: 'w:u1' };
    };
    await cache.get('h1', load);
    await cache.get('h1', load);
    expect(loads).toBe(2);
    expect(cache.tagged('key:k1')).toBe(0);

    cache.setTrusted(true);
    await cache.get('h1', load);
    await cache.get('h1', load);
    expect(loads).toBe(3);
    cache.setTrusted(false);
    expect(cache.tagged('key:k1')).toBe(0);
    expect(cache.peek('h1')).toBeUndefined();
  });

  test('a lookup that started while untrusted is not stored when trust returns (it may predate a revocation)', async () => {
    const cache = new LookupCache<Entry>(60_000, { tags });
    const pending = deferred<Entry>();
    const result = cache.get('h1', () => pending.promise);
    cache.setTrusted(true);
    pending.resolve({ id: 'k1', member: 'w:u1' });
    await result;
    expect(cache.peek('h1')).toBeUndefined();
  });

  test('a cache without tags is trusted from the start (the JWT verification cache)', async () => {
    const cache = new LookupCache<{ ok: true }>(60_000, 10);
    await cache.get('t', async () => ({ ok: true }));
    expect(cache.peek('t')).toEqual({ ok: true });
  });
});
