import { describe, expect, test, vi } from 'vitest';
import { createLogger } from '@tws/common';
import { rateLimitHeaders } from './headers.js';
import { KeyedTokenBuckets, keyHash } from './keyed-buckets.js';
import { RateLimitSync, type SyncAnswer, type SyncCall } from './sync.js';

const logger = createLogger('gateway', 'silent');

/** The tasks service's shared buckets, as store/rate-limits.ts computes them (refill ignored: a slow rate). */
function fakeCluster(burst: number) {
  const tokens = new Map<string, number>();
  const totals = new Map<string, number>();
  const replicas = new Set<string>();
  let down = false;
  return {
    tokens,
    setDown(value: boolean) {
      down = value;
    },
    async send(call: SyncCall): Promise<SyncAnswer> {
      if (down) throw new Error('UNAVAILABLE');
      replicas.add(call.replicaId);
      return {
        buckets: call.usages.map((usage) => {
          const created = !tokens.has(usage.keyHash);
          const left = Math.max(-burst, (tokens.get(usage.keyHash) ?? burst) - usage.consumed);
          const total = (totals.get(usage.keyHash) ?? 0) + usage.consumed;
          tokens.set(usage.keyHash, left);
          totals.set(usage.keyHash, total);
          return { keyHash: usage.keyHash, tokens: left, total, created };
        }),
        replicas: replicas.size,
      };
    },
  };
}

function replica(cluster: ReturnType<typeof fakeCluster>, id: string, burst = 10, maxKeys = 100) {
  const buckets = new KeyedTokenBuckets(0.001, burst, { shared: true });
  const sync = new RateLimitSync({ buckets, send: (call) => cluster.send(call), replicaId: id, policy: { perSecond: 0.001, burst }, maxKeys, logger });
  return { buckets, sync };
}

const passes = (buckets: KeyedTokenBuckets, key: string, times: number): number =>
  Array.from({ length: times }, () => buckets.consume(key)?.allowed).filter(Boolean).length;

describe('RateLimit headers', () => {
  test('policy: the burst per full-refill time; the state counts down and tells when the bucket is full again', () => {
    vi.useFakeTimers({ toFake: ['performance', 'Date'] });
    try {
      const buckets = new KeyedTokenBuckets(50, 200);
      expect(buckets.policy).toEqual({ quota: 200, windowSeconds: 4 });
      const first = buckets.consume('k')!;
      expect(rateLimitHeaders(buckets.policy, first)).toEqual({ 'ratelimit-policy': '"default";q=200;w=4', ratelimit: '"default";r=199;t=1' });
      expect(rateLimitHeaders(buckets.policy, buckets.consume('k')!).ratelimit).toBe('"default";r=198;t=1');
      for (let i = 0; i < 198; i += 1) buckets.consume('k');
      const refused = buckets.consume('k')!;
      expect(refused).toEqual({ allowed: false, remaining: 0, resetSeconds: 4, retryAfterSeconds: 1 });
      vi.advanceTimersByTime(1_000); // 50 tokens back
      expect(rateLimitHeaders(buckets.policy, buckets.consume('k')!).ratelimit).toBe('"default";r=49;t=4');
    } finally {
      vi.useRealTimers();
    }
  });

  test('the window is whole seconds, at least 1', () => {
    expect(new KeyedTokenBuckets(0.5, 3).policy).toEqual({ quota: 3, windowSeconds: 6 });
    expect(new KeyedTokenBuckets(1000, 3).policy).toEqual({ quota: 3, windowSeconds: 1 });
  });
});

describe('shared buckets', () => {
  test('two replicas each let half a burst through: after a sync neither lets another request pass', async () => {
    const cluster = fakeCluster(10);
    const a = replica(cluster, 'a');
    const b = replica(cluster, 'b');
    expect(passes(a.buckets, 'k', 5)).toBe(5);
    expect(passes(b.buckets, 'k', 5)).toBe(5);
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    await a.sync.syncOnce();
    expect(cluster.tokens.get(keyHash('k'))).toBe(0);
    expect(a.buckets.consume('k')).toMatchObject({ allowed: false, remaining: 0 });
    expect(b.buckets.consume('k')).toMatchObject({ allowed: false, remaining: 0 });
    expect(a.sync.lastKnownReplicas).toBe(2);
  });

  test('a sync takes only the other replicas\' usage: the local refill stays exact (one replica = an unshared bucket)', async () => {
    vi.useFakeTimers({ toFake: ['performance', 'Date'] });
    try {
      const cluster = fakeCluster(10); // its refill is ignored: the replicas' own refill is what counts
      const mk = (id: string) => {
        const buckets = new KeyedTokenBuckets(10, 10, { shared: true });
        return { buckets, sync: new RateLimitSync({ buckets, send: (call) => cluster.send(call), replicaId: id, policy: { perSecond: 10, burst: 10 }, maxKeys: 100, logger }) };
      };
      const a = mk('a');
      const b = mk('b');
      expect(passes(a.buckets, 'k', 12)).toBe(10);
      vi.advanceTimersByTime(400); // 4 tokens back here, whatever the sync says
      await a.sync.syncOnce();
      expect(passes(a.buckets, 'k', 1)).toBe(1);
      await a.sync.syncOnce();
      // b uses 3 (its first sync: it adopts the shared bucket if that has fewer tokens), a learns it at its next sync.
      expect(passes(b.buckets, 'k', 3)).toBe(3);
      await b.sync.syncOnce();
      const before = a.buckets.consume('k')!.remaining; // 4 − 1 − this one
      expect(before).toBe(2);
      await a.sync.syncOnce();
      expect(a.buckets.consume('k')).toMatchObject({ allowed: false }); // 2 − 3 others < 1
    } finally {
      vi.useRealTimers();
    }
  });

  test('without the sync, the same traffic gets twice the burst (the defect the sync removes)', () => {
    const a = new KeyedTokenBuckets(0.001, 10);
    const b = new KeyedTokenBuckets(0.001, 10);
    expect(passes(a, 'k', 10) + passes(b, 'k', 10)).toBe(20);
  });

  test('requests let through while a sync is in flight are subtracted from the answer', async () => {
    const cluster = fakeCluster(10);
    const a = replica(cluster, 'a');
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = new RateLimitSync({
      buckets: a.buckets,
      replicaId: 'a',
      policy: { perSecond: 0.001, burst: 10 },
      maxKeys: 100,
      logger,
      send: async (call) => {
        await gate;
        return cluster.send(call);
      },
    });
    expect(passes(a.buckets, 'k', 4)).toBe(4);
    const syncing = slow.syncOnce();
    expect(passes(a.buckets, 'k', 3)).toBe(3); // after the drain: not in this sync
    release();
    await syncing;
    expect(cluster.tokens.get(keyHash('k'))).toBe(6);
    expect(a.buckets.consume('k')?.remaining).toBe(2); // 6 − 3 in flight − this one
    await a.sync.syncOnce();
    expect(cluster.tokens.get(keyHash('k'))).toBe(2);
  });

  test('an overshoot is a debt, paid back before the key passes again', async () => {
    const cluster = fakeCluster(10);
    const a = replica(cluster, 'a');
    const b = replica(cluster, 'b');
    expect(passes(a.buckets, 'k', 10) + passes(b.buckets, 'k', 10)).toBe(20);
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    expect(cluster.tokens.get(keyHash('k'))).toBe(-10);
    const refused = b.buckets.consume('k')!;
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterSeconds).toBeGreaterThan(10_000); // 11 tokens at 0.001/s
  });

  test('sync down: usage kept for the next sync, and each request costs the last known replica count', async () => {
    const cluster = fakeCluster(10);
    const a = replica(cluster, 'a');
    const b = replica(cluster, 'b');
    a.buckets.consume('warm');
    b.buckets.consume('warm');
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    expect(b.sync.lastKnownReplicas).toBe(2);

    cluster.setDown(true);
    expect(passes(b.buckets, 'k', 1)).toBe(1);
    await b.sync.syncOnce(); // fails: never throws
    expect(b.buckets.requestCost).toBe(2);
    expect(passes(b.buckets, 'k', 10)).toBe(4); // 9 tokens left at 2 each
    expect(b.buckets.consume('k')).toMatchObject({ allowed: false, remaining: 0 });

    cluster.setDown(false);
    await b.sync.syncOnce();
    expect(b.buckets.requestCost).toBe(1);
    expect(cluster.tokens.get(keyHash('k'))).toBe(5); // 1 + 4 requests, none lost
  });

  test('a sync carries at most maxKeys keys; the others go next time; evicted keys are dropped', async () => {
    const cluster = fakeCluster(10);
    const a = replica(cluster, 'a', 10, 2);
    for (const key of ['x', 'y', 'z']) a.buckets.consume(key);
    const drained = () => a.buckets.drainUsage(2).map((usage) => [usage.key, usage.consumed]);
    expect(drained()).toEqual([['x', 1], ['y', 1]]);
    // z's turn, then keys without new traffic stay in a few more syncs (to learn the others' usage), then leave.
    expect(drained()).toEqual([['z', 1], ['x', 0]]);
    const later = Array.from({ length: 20 }, drained).flat();
    expect(later.filter(([key]) => key === 'x')).toHaveLength(9);
    expect(later.filter(([key]) => key === 'y')).toHaveLength(10);
    expect(later.filter(([key]) => key === 'z')).toHaveLength(10);
    expect(later.every(([, consumed]) => consumed === 0)).toBe(true);
    expect(drained()).toEqual([]);

    const small = new KeyedTokenBuckets(0.001, 10, { maxKeys: 2, shared: true });
    for (const key of ['p', 'q', 'r']) small.consume(key);
    expect(small.drainUsage(10).map((usage) => usage.key)).toEqual(['q', 'r']);

    const alone = new KeyedTokenBuckets(0.001, 10); // not shared (failed-authentication buckets, RATE_LIMIT_SYNC_INTERVAL_MS=0)
    alone.consume('p');
    expect(alone.drainUsage(10)).toEqual([]);
  });

  test('keys leave the process only as SHA-256 hex', async () => {
    const sent: SyncCall[] = [];
    const buckets = new KeyedTokenBuckets(1, 10, { shared: true });
    const sync = new RateLimitSync({
      buckets,
      replicaId: 'a',
      policy: { perSecond: 1, burst: 10 },
      maxKeys: 10,
      logger,
      send: async (call) => {
        sent.push(call);
        return { buckets: [], replicas: 1 };
      },
    });
    buckets.consume('ip:10.0.0.1');
    await sync.syncOnce();
    expect(sent[0]?.usages).toEqual([{ keyHash: keyHash('ip:10.0.0.1'), consumed: 1 }]);
    expect(sent[0]?.usages[0]?.keyHash).toMatch(/^[0-9a-f]{64}$/);
  });
});
