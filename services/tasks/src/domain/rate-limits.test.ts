import { DomainError, type Pool } from '@tws/common';
import { describe, expect, test } from 'vitest';
import { maxSyncKeys, syncRateLimits, type SyncRequest } from './rate-limits.js';

/** A pool that must not be reached: a refused request never touches the database. */
const unreachable = {
  query: () => {
    throw new Error('the database was reached');
  },
} as unknown as Pool;

const hash = (n: number): string => n.toString(16).padStart(64, '0');
const valid: SyncRequest = { replicaId: 'gw-1', tokensPerSecond: 50, burst: 200, usages: [{ keyHash: hash(1), consumed: 3 }] };

describe('SyncRateLimits input bounds', () => {
  test.each<[string, Partial<SyncRequest>, RegExp]>([
    ['no replica id', { replicaId: '' }, /replicaId/],
    ['a replica id over 64 characters', { replicaId: 'x'.repeat(65) }, /replicaId/],
    ['a zero rate', { tokensPerSecond: 0 }, /tokensPerSecond/],
    ['a zero burst', { burst: 0 }, /burst/],
    ['a key that is not a SHA-256', { usages: [{ keyHash: 'ip:10.0.0.1', consumed: 1 }] }, /usages\.0\.keyHash: must be a lower-case hex SHA-256/],
    ['an upper-case hash', { usages: [{ keyHash: hash(1).toUpperCase().replace(/^0/, 'A'), consumed: 1 }] }, /keyHash/],
    ['a count over a million', { usages: [{ keyHash: hash(1), consumed: 1_000_001 }] }, /consumed/],
    ['one key twice', { usages: [{ keyHash: hash(1), consumed: 1 }, { keyHash: hash(1), consumed: 2 }] }, /each key at most once/],
    ['too many keys', { usages: Array.from({ length: maxSyncKeys + 1 }, (_, i) => ({ keyHash: hash(i), consumed: 1 })) }, /at most 10000 keys/],
  ])('%s: INVALID_ARGUMENT, nothing read or written', async (_name, change, message) => {
    const error = await syncRateLimits(unreachable, { ...valid, ...change }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).kind).toBe('invalid_argument');
    expect((error as DomainError).message).toMatch(message);
  });

  test('a valid request reaches the store', async () => {
    await expect(syncRateLimits(unreachable, valid)).rejects.toThrow('the database was reached');
  });
});
