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

describe('durable: marked when acknowledged, resumed by the sweeper', () => {
  test('an acknowledged announcement is marked; the sweeper announces the unmarked ones with their own expiry', async () => {
    const tasks = fakeTasks(0);
    const marked: string[] = [];
    const revokedAt = new Date(Date.now() - 10 * 60_000);
    const store = {
      announced: async (grantId: string) => void marked.push(grantId),
      unannounced: async (withinSeconds: number) => {
        expect(withinSeconds).toBe(3_660);
        return [{ grantId: 'missed', accountId: 'user-9', revokedAt }];
      },
    };
    const announcer = new GrantRevocationAnnouncer(tasks.api, { deadlineMs: 1_000, logger: quiet, retryDelayMs: 1, store });
    await announcer.announce('grant-4', 'user-1');
    expect(marked).toEqual(['grant-4']);
    expect(await announcer.resume()).toBe(1);
    expect(marked).toEqual(['grant-4', 'missed']);
    expect(tasks.requests[1]).toEqual({ grantId: 'missed', actorUserId: 'user-9', expiresAtMs: String(revokedAt.getTime() + 3_660_000) });
  });

  test('the sweeper stops at the first failure (the next sweep tries again)', async () => {
    const tasks = fakeTasks(100);
    const store = {
      announced: async () => undefined,
      unannounced: async () => [
        { grantId: 'a', accountId: null, revokedAt: new Date() },
        { grantId: 'b', accountId: null, revokedAt: new Date() },
      ],
    };
    const announcer = new GrantRevocationAnnouncer(tasks.api, { deadlineMs: 1_000, logger: quiet, store });
    expect(await announcer.resume()).toBe(0);
    expect(tasks.requests).toHaveLength(1);
  });
});
