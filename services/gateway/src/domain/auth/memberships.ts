import { status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcError, isUuid } from '@tws/common';
import type { TasksApi } from '../../clients/backends.js';
import { LookupCache } from './lookup-cache.js';

/**
 * Answers "is this user a member of this workspace?" through tasks.GetMembership; positive answers
 * are cached for `AUTH_MEMBERSHIP_CACHE_TTL_MS`, so a removed member keeps access at most that long.
 */
export class MembershipChecker {
  private readonly cache: LookupCache<{ member: true }>;

  constructor(
    private readonly tasks: TasksApi,
    ttlMs: number,
  ) {
    this.cache = new LookupCache<{ member: true }>(ttlMs);
  }

  async isMember(workspaceId: string, userId: string): Promise<boolean> {
    // Ids are UUIDs; anything else cannot be a membership and is not worth a round trip.
    if (!isUuid(workspaceId) || !isUuid(userId)) return false;
    try {
      await this.cache.get(`${workspaceId}:${userId}`, async () => {
        await this.tasks.GetMembership({ workspaceId, userId });
        return { member: true } as const;
      });
      return true;
    } catch (error) {
      if (isGrpcError(error) && (error.code === GrpcStatus.NOT_FOUND || error.code === GrpcStatus.PERMISSION_DENIED)) return false;
      throw error;
    }
  }
}
