import { expect, test } from 'vitest';
import { RevokedGrants, type ListRevokedGrants } from './revoked-grants.js';

function listing(grants: Array<{ grantId: string; expiresAtMs: number }>, truncated = false) {
  const calls: Array<{ grantId: string; limit: number }> = [];
  const list: ListRevokedGrants = async (request) => {
    calls.push(request);
    const found = grants.filter((grant) => request.grantId === '' || grant.grantId === request.grantId);
    return { grants: found.slice(0, request.limit), truncated: truncated || found.length > request.limit };
  };
  return { list, calls };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

test('synced only once trusted and loaded; answers alone then; expired entries drop', async () => {
  let now = 1_000;
  const { list, calls } = listing([{ grantId: 'old', expiresAtMs: 5_000 }]);
  const grants = new RevokedGrants(list, { maxEntries: 10, onError: () => undefined, now: () => now });
  expect(grants.synced).toBe(false);
  expect(await grants.isRevoked('old')).toBe(true); // asked: not synced
  expect(calls).toEqual([{ grantId: 'old', limit: 1 }]);
  grants.setTrusted(true);
  await settle();
  expect(grants.synced).toBe(true);
  grants.add('pushed', 2_000);
  expect(await grants.isRevoked('pushed')).toBe(true);
  expect(await grants.isRevoked('never')).toBe(false);
  expect(calls).toHaveLength(2); // the load only
  now = 3_000;
  expect(await grants.isRevoked('pushed')).toBe(false);
  grants.prune();
  expect(grants.size).toBe(1);
  grants.setTrusted(false);
  expect(grants.synced).toBe(false);
});

test('over the cap: not synced (each grant asked), until a reload fits', async () => {
  const now = 0;
  const { list, calls } = listing([]);
  const grants = new RevokedGrants(list, { maxEntries: 2, onError: () => undefined, now: () => now });
  grants.setTrusted(true);
  await settle();
  grants.add('a', 10);
  grants.add('b', 10);
  expect(grants.synced).toBe(true);
  grants.add('c', 10);
  expect(grants.synced).toBe(false);
  expect(grants.size).toBe(2);
  expect(await grants.isRevoked('c')).toBe(false); // the fake tasks does not know it; the point: it was asked
  expect(calls.at(-1)).toEqual({ grantId: 'c', limit: 1 });
});

test('a truncated list is not complete', async () => {
  const { list } = listing([{ grantId: 'x', expiresAtMs: 10 }], true);
  const grants = new RevokedGrants(list, { maxEntries: 5, onError: () => undefined, now: () => 0 });
  grants.setTrusted(true);
  await settle();
  expect(grants.synced).toBe(false);
  expect(await grants.isRevoked('x')).toBe(true);
});
