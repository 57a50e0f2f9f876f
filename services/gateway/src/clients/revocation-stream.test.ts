import * as grpc from '@grpc/grpc-js';
import { createLogger } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import type { FastifyBaseLogger } from 'fastify';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startFakeTasks, type FakeTasks } from '../testing/harness.js';
import { parseRevocation, RevocationStream, type Revocation, type RevocationCall } from './revocation-stream.js';

/** The stream client's state machine against a real gRPC server (the harness's fake tasks.v1.RevocationService). */
describe('RevocationStream', () => {
  let fake: FakeTasks;
  let client: grpc.Client & { WatchRevocations(): RevocationCall };
  let stream: RevocationStream | undefined;
  let trust: boolean[];
  let revocations: Revocation[];

  beforeEach(async () => {
    fake = await startFakeTasks();
    const Service = loadTasksProto().tasks.v1.RevocationService;
    client = new Service(`127.0.0.1:${fake.port}`, grpc.credentials.createInsecure()) as typeof client;
    trust = [];
    revocations = [];
  });
  afterEach(async () => {
    stream?.stop();
    client.close();
    await fake.stop();
  });

  function startStream(options: { initialBackoffMs?: number; connectTimeoutMs?: number } = {}): RevocationStream {
    stream = new RevocationStream({
      open: () => client.WatchRevocations(),
      watcherName: 'unit-test',
      logger: createLogger('gateway', 'silent') as unknown as FastifyBaseLogger,
      listener: {
        onRevocation: (revocation) => revocations.push(revocation),
        onTrustChange: (value) => trust.push(value),
      },
      initialBackoffMs: options.initialBackoffMs ?? 20,
      maxBackoffMs: 100,
      ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
    });
    stream.start();
    return stream;
  }

  const until = async (condition: () => boolean, timeoutMs = 3_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  test('trusts the caches only after ready; applies, then acknowledges, each revocation', async () => {
    const s = startStream();
    expect(s.state).toBe('connecting');
    expect(trust).toEqual([]);
    expect(await s.whenReady(3_000)).toBe(true);
    expect(s.state).toBe('ready');
    expect(trust).toEqual([true]);

    await fake.revocations.push({ id: 'r1', kind: 'REVOCATION_KIND_API_KEY', workspaceId: 'w1', apiKeyId: 'k1', revokedAtMs: 1234 });
    await fake.revocations.push({ id: 'r2', kind: 'REVOCATION_KIND_MEMBERSHIP', workspaceId: 'w1', userId: 'u1' });
    expect(fake.revocations.acks).toEqual(['r1', 'r2']);
    expect(revocations[0]).toEqual({ id: 'r1', kind: 'apiKey', workspaceId: 'w1', apiKeyId: 'k1', revokedAtMs: 1234 });
    expect(revocations[1]).toMatchObject({ id: 'r2', kind: 'membership', workspaceId: 'w1', userId: 'u1' });
  });

  test('a dropped stream distrusts at once, reconnects with backoff and trusts again when ready', async () => {
    const s = startStream();
    await s.whenReady(3_000);
    fake.revocations.dropAll();
    await until(() => trust.length === 2);
    expect(trust).toEqual([true, false]);
    await until(() => s.state === 'ready');
    expect(trust).toEqual([true, false, true]);
    // The new stream works.
    await fake.revocations.push({ id: 'r3', kind: 'REVOCATION_KIND_API_KEY', workspaceId: 'w1', apiKeyId: 'k3' });
    expect(revocations.map((revocation) => revocation.id)).toEqual(['r3']);
  });

  test('a server that refuses (its database session is down) leaves the caches untrusted while it retries', async () => {
    fake.revocations.mode = 'refuse';
    const s = startStream();
    expect(await s.whenReady(300)).toBe(false);
    expect(trust).toEqual([]);
    expect(['connecting', 'waiting']).toContain(s.state);
    fake.revocations.mode = 'ready';
    expect(await s.whenReady(3_000)).toBe(true);
    expect(trust).toEqual([true]);
  });

  test('subscribed without ready is not trusted, and given up after the connect timeout', async () => {
    fake.revocations.mode = 'mute';
    const s = startStream({ connectTimeoutMs: 150, initialBackoffMs: 1_000 });
    await until(() => fake.revocations.watchers.size === 1);
    expect(await s.whenReady(100)).toBe(false);
    await until(() => s.state === 'waiting');
    expect(trust).toEqual([]);
    fake.revocations.mode = 'ready';
    expect(await s.whenReady(3_000)).toBe(true);
  });

  test('silence (no heartbeat for 3 intervals) counts as disconnected; heartbeats keep it ready', async () => {
    fake.revocations.heartbeatIntervalMs = 100;
    const s = startStream({ initialBackoffMs: 2_000 });
    await s.whenReady(3_000);
    const beat = setInterval(() => fake.revocations.heartbeat(), 50);
    await new Promise((resolve) => setTimeout(resolve, 600));
    clearInterval(beat);
    expect(s.state).toBe('ready');
    expect(trust).toEqual([true]);
    const silentSince = Date.now();
    await until(() => s.state !== 'ready', 2_000);
    expect(Date.now() - silentSince).toBeGreaterThanOrEqual(250);
    expect(trust).toEqual([true, false]);
    expect(s.state).toBe('waiting');
  });

  test('stop distrusts and does not reconnect', async () => {
    const s = startStream();
    await s.whenReady(3_000);
    s.stop();
    expect(s.state).toBe('stopped');
    expect(trust).toEqual([true, false]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(fake.revocations.watchers.size).toBe(0);
  });
});

describe('parseRevocation', () => {
  test('a kind this version does not know reads as "unknown" (the caches clear everything)', () => {
    expect(parseRevocation({ id: 'r', kind: 'REVOCATION_KIND_UNSPECIFIED', workspaceId: '', apiKeyId: '', userId: '', revokedAtMs: '0', grantId: '', expiresAtMs: '0' })).toEqual({
      id: 'r',
      kind: 'unknown',
      revokedAtMs: 0,
    });
  });
  test('a revoked grant: its id and the expiry of its tokens', () => {
    expect(parseRevocation({ id: 'r', kind: 'REVOCATION_KIND_GRANT', workspaceId: '', apiKeyId: '', userId: '', revokedAtMs: '1', grantId: 'g1', expiresAtMs: '9' })).toEqual({
      id: 'r',
      kind: 'grant',
      grantId: 'g1',
      expiresAtMs: 9,
      revokedAtMs: 1,
    });
  });
  test('a known kind without its ids is a protocol error', () => {
    expect(parseRevocation({ id: 'r', kind: 'REVOCATION_KIND_API_KEY', workspaceId: 'w', apiKeyId: '', userId: '', revokedAtMs: '1', grantId: '', expiresAtMs: '0' })).toBeUndefined();
    expect(parseRevocation({ id: 'r', kind: 'REVOCATION_KIND_GRANT', workspaceId: '', apiKeyId: '', userId: '', revokedAtMs: '1', grantId: '', expiresAtMs: '9' })).toBeUndefined();
    expect(parseRevocation(null)).toBeUndefined();
  });
});
