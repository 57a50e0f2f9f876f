import { status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcError, isUuid } from '@tws/common';
import type { TasksApi } from '../../clients/backends.js';
import { LookupCache } from './lookup-cache.js';

/** The tag of what is cached about one membership (the membership itself, the member's API keys). */
export const memberTag = (workspaceId: string, userId: string): string => `member:${workspaceId}:${userId}`;

interface Membership {
  workspaceId: string;
  userId: string;
}

/**
 * Answers "is this user a member of this workspace?" through tasks.GetMembership; positive answers
 * are cached for `AUTH_MEMBERSHIP_CACHE_TTL_MS`, indexed by (workspace, user) so a pushed "membership
 * ended" evicts them at once. Untrusted (revocations not reaching this replica): no caching.
 */
export class MembershipChecker {
  readonly cache: LookupCache<Membership>;

  constructor(
    private readonly tasks: TasksApi,
    ttlMs: number,
  ) {
    this.cache = new LookupCache<Membership>(ttlMs, { tags: (membership) => [memberTag(membership.workspaceId, membership.userId)] });
  }

  /** Evicts the cached membership of a user whose membership ended. */
  revoke(workspaceId: string, userId: string): number {
    return this.cache.invalidate(memberTag(workspaceId, userId));
  }

  async isMember(workspaceId: string, userId: string): Promise<boolean> {
    // Ids are UUIDs; anything else cannot be a membership and is not worth a round trip.
    if (!isUuid(workspaceId) || !isUuid(userId)) return false;
    try {
      await this.cache.get(`${workspaceId}:${userId}`, async () => {
        await this.tasks.GetMembership({ workspaceId, userId });
        return { workspaceId, userId };
      });
      return true;
    } catch (error) {
      if (isGrpcError(error) && (error.code === GrpcStatus.NOT_FOUND || error.code === GrpcStatus.PERMISSION_DENIED)) return false;
      throw error;
    }
  }
}
