import { describe, expect, test } from 'vitest';
import type { RevocationsApi } from '../clients/tasks.js';
import { GrantRevocationAnnouncer } from './grant-revocations.js';

/** A tasks service that fails the first `failures` announcements, then confirms. */
function fakeTasks(failures: number) {
  const requests: Array<{ grantId?: string; expiresAtMs?: unknown; actorUserId?: string }> = [];
  const api: RevocationsApi = {
    AnnounceGrantRevocation: async (request) => {
      requests.push({ grantId: request.grantId ?? '', expiresAtMs: request.expiresAtMs, actorUserId: request.actorUserId ?? '' });
      if (requests.length <= failures) throw new Error('UNAVAILABLE: tasks is down');
      return { confirmed: true };
    },
  };
  return { api, requests };
}

const quiet = { warn: () => undefined };

describe('pushing a revoked grant to the gateways', () => {
  test('announced once with the grant, the person and the latest expiry of its tokens (≤ 1 h + 1 min)', async () => {
    const tasks = fakeTasks(0);
    const announcer = new GrantRevocationAnnouncer(tasks.api, { deadlineMs: 1_000, logger: quiet, retryDelayMs: 1 });
    const before = Date.now();
    await announcer.announce('grant-1', 'user-1');
    expect(tasks.requests).toHaveLength(1);
    expect(tasks.requests[0]).toMatchObject({ grantId: 'grant-1', actorUserId: 'user-1' });
    const expiresAtMs = Number(tasks.requests[0]!.expiresAtMs);
    expect(expiresAtMs).toBeGreaterThanOrEqual(before + 3_660_000);
    expect(expiresAtMs).toBeLessThanOrEqual(Date.now() + 3_660_000);
  });

  test('retried at once, then in the background until the tasks service answers', async () => {
    const tasks = fakeTasks(4);
    const announcer = new GrantRevocationAnnouncer(tasks.api, { deadlineMs: 1_000, logger: quiet, retryDelayMs: 1 });
    await announcer.announce('grant-2');
    expect(tasks.requests).toHaveLength(3);
    for (let i = 0; i < 100 && tasks.requests.length < 5; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(tasks.requests).toHaveLength(5);
    expect(tasks.requests.every((request) => request.grantId === 'grant-2' && request.actorUserId === '')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(tasks.requests).toHaveLength(5);
    announcer.close();
  });

  test('closing stops the background retries', async () => {
    const tasks = fakeTasks(100);
    const announcer = new GrantRevocationAnnouncer(tasks.api, { deadlineMs: 1_000, logger: quiet, retryDelayMs: 1 });
    await announcer.announce('grant-3');
    announcer.close();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(tasks.requests).toHaveLength(3);
  });
});
