import { createLogger } from '@tws/common';
import { Registry } from 'prom-client';
import { describe, expect, test } from 'vitest';
import { createRevocationMetrics } from '../metrics.js';
import { RevocationHub, type CloseKind, type WatcherEvent, type WatcherSink } from './revocation-hub.js';
import { apiKeyRevoked, grantRevoked, membershipEnded, parseAck, parseNotice } from './revocations.js';

class FakeSink implements WatcherSink {
  events: WatcherEvent[] = [];
  closed: { kind: CloseKind; details: string } | undefined;
  /** How many more events it accepts (then its buffer is "full"). */
  capacity = Infinity;
  send(event: WatcherEvent): boolean {
    if (this.capacity <= 0) return false;
    this.capacity -= 1;
    this.events.push(event);
    return true;
  }
  close(kind: CloseKind, details: string): void {
    this.closed = { kind, details };
  }
  revocationIds(): string[] {
    return this.events.flatMap((event) => (event.type === 'revocation' ? [event.notice.id] : []));
  }
}

function hub(options: { maxWatchers?: number; ackTimeoutMs?: number; maxUnacked?: number } = {}) {
  const acked: string[] = [];
  const registry = new Registry();
  const instance = new RevocationHub({
    replicaId: 'r1',
    heartbeatIntervalMs: 1_000,
    ackTimeoutMs: options.ackTimeoutMs ?? 200,
    maxWatchers: options.maxWatchers ?? 10,
    maxUnacked: options.maxUnacked ?? 64,
    logger: createLogger('tasks', 'silent'),
    metrics: createRevocationMetrics(registry).hub,
    onReplicaAcked: (id) => acked.push(id),
  });
  return { hub: instance, acked, registry };
}

const workspace = '0a9f3c52-6c3e-4c39-9d2f-1b1f7c1e0a01';
const key = '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e03';

describe('RevocationHub', () => {
  test('refuses watchers while its LISTEN session is down, and over maxWatchers', () => {
    const { hub: h } = hub({ maxWatchers: 1 });
    const early = new FakeSink();
    expect(h.subscribe('early', early)).toBeUndefined();
    expect(early.closed?.kind).toBe('unavailable');
    h.listenerUp();
    const first = new FakeSink();
    expect(h.subscribe('first', first)).toBeDefined();
    expect(first.events).toEqual([{ type: 'ready', heartbeatIntervalMs: 1_000 }]);
    const second = new FakeSink();
    expect(h.subscribe('second', second)).toBeUndefined();
    expect(second.closed?.kind).toBe('exhausted');
  });

  test('a revocation is acknowledged for the replica once every watcher acknowledged it', () => {
    const { hub: h, acked } = hub();
    h.listenerUp();
    const a = new FakeSink();
    const b = new FakeSink();
    const handleA = h.subscribe('a', a)!;
    const handleB = h.subscribe('b', b)!;
    const notice = apiKeyRevoked(workspace, key);
    h.deliver(notice);
    expect(a.revocationIds()).toEqual([notice.id]);
    expect(b.revocationIds()).toEqual([notice.id]);
    handleA.acknowledge(notice.id);
    expect(acked).toEqual([]);
    handleB.acknowledge('not-a-pending-id');
    handleB.acknowledge(notice.id);
    expect(acked).toEqual([notice.id]);
  });

  test('with no watchers a revocation is acknowledged at once', () => {
    const { hub: h, acked } = hub();
    h.listenerUp();
    const notice = membershipEnded(workspace, key);
    h.deliver(notice);
    expect(acked).toEqual([notice.id]);
  });

  test('a watcher that does not acknowledge in time is cut off, and the replica acknowledges without it', async () => {
    const { hub: h, acked } = hub({ ackTimeoutMs: 50 });
    h.listenerUp();
    const slow = new FakeSink();
    const fast = new FakeSink();
    h.subscribe('slow', slow);
    const fastHandle = h.subscribe('fast', fast)!;
    const notice = apiKeyRevoked(workspace, key);
    h.deliver(notice);
    fastHandle.acknowledge(notice.id);
    expect(acked).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(acked).toEqual([notice.id]);
    expect(slow.closed?.kind).toBe('unavailable');
    expect(fast.closed).toBeUndefined();
    expect(h.watcherCount).toBe(1);
  });

  test('no unbounded buffering: a watcher whose buffer is full, or with too many unacknowledged, is dropped', () => {
    const { hub: h, acked } = hub({ maxUnacked: 2 });
    h.listenerUp();
    const full = new FakeSink();
    full.capacity = 2; // ready + one revocation
    const lagging = new FakeSink();
    h.subscribe('full', full);
    h.subscribe('lagging', lagging);
    const notices = [apiKeyRevoked(workspace, key), apiKeyRevoked(workspace, key), apiKeyRevoked(workspace, key)];
    for (const notice of notices) h.deliver(notice);
    expect(full.closed?.kind).toBe('exhausted');
    expect(lagging.closed?.kind).toBe('exhausted');
    expect(lagging.revocationIds()).toHaveLength(2);
    // Dropping them settled what they owed: every revocation is acknowledged for the replica.
    expect(acked.sort()).toEqual(notices.map((notice) => notice.id).sort());
    expect(h.watcherCount).toBe(0);
  });

  test('losing the LISTEN session cuts every watcher off; a leaving watcher no longer holds revocations back', () => {
    const { hub: h, acked } = hub();
    h.listenerUp();
    const leaving = new FakeSink();
    const handle = h.subscribe('leaving', leaving)!;
    const notice = apiKeyRevoked(workspace, key);
    h.deliver(notice);
    handle.leave();
    expect(acked).toEqual([notice.id]);

    const a = new FakeSink();
    h.subscribe('a', a);
    h.heartbeat();
    expect(a.events.at(-1)).toEqual({ type: 'heartbeat' });
    h.listenerDown('connection reset');
    expect(a.closed?.kind).toBe('unavailable');
    h.heartbeat();
    expect(a.events.filter((event) => event.type === 'heartbeat')).toHaveLength(1);
  });

  test('closeAll (shutdown) ends the streams and refuses new ones', () => {
    const { hub: h } = hub();
    h.listenerUp();
    const a = new FakeSink();
    h.subscribe('a', a);
    h.closeAll('shutting down');
    expect(a.closed).toEqual({ kind: 'unavailable', details: 'shutting down' });
    const b = new FakeSink();
    expect(h.subscribe('b', b)).toBeUndefined();
    expect(b.closed?.kind).toBe('unavailable');
  });
});

describe('revocation notifications', () => {
  test('round trip, and a tolerant reader for kinds a newer replica may send', () => {
    const notice = apiKeyRevoked(workspace, key);
    expect(parseNotice(JSON.stringify(notice))).toEqual(notice);
    const grant = grantRevoked('Gr4nt_id-1', 2_000);
    expect(parseNotice(JSON.stringify(grant))).toEqual(grant);
    expect(parseNotice(JSON.stringify({ ...grant, grantId: 'no spaces' }))).toBeUndefined();
    const newer = { id: notice.id, kind: 'session', sessionId: 'g', at: 1 };
    expect(parseNotice(JSON.stringify(newer))).toEqual({ id: notice.id, kind: 'unknown', at: 1 });
    expect(parseNotice('{"kind":"api_key"}')).toBeUndefined();
    expect(parseNotice('not json')).toBeUndefined();
    // A known kind with a broken field is not downgraded to "unknown".
    expect(parseNotice(JSON.stringify({ ...notice, apiKeyId: 'x' }))).toBeUndefined();
    expect(parseAck(JSON.stringify({ id: notice.id, replica: 'r1' }))).toEqual({ id: notice.id, replica: 'r1' });
    expect(parseAck(JSON.stringify({ id: 'x', replica: 'r1' }))).toBeUndefined();
  });
});
