import { hash } from 'node:crypto';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcError } from '@tws/common';
import type { TasksApi } from '../../clients/backends.js';
import { LookupCache } from './lookup-cache.js';
import { memberTag } from './memberships.js';
import type { Principal } from './principal.js';

export type ApiKeyPrincipal = Extract<Principal, { kind: 'apiKey' }>;

/** A hash of a credential: what caches and rate-limit buckets are keyed by, never the secret itself. */
export function credentialHash(secret: string): string {
  return hash('sha256', secret, 'base64url');
}

/** Longest API key accepted for a lookup; real keys are a prefix plus ~32–64 characters. */
const maxKeyLength = 512;

/** The tag of every cached lookup of one API key (by its id). */
export const apiKeyTag = (apiKeyId: string): string => `key:${apiKeyId}`;

/**
 * Resolves `X-API-Key` values through tasks.AuthenticateApiKey. Successful lookups are cached for
 * `AUTH_API_KEY_CACHE_TTL_MS` under the key's SHA-256, indexed by the key's id and by its creator's
 * membership, so a pushed revocation (plugins/revocations.ts) evicts them at once. While revocations
 * do not reach this replica the cache is untrusted and every request looks the key up.
 */
export class ApiKeyAuthenticator {
  readonly cache: LookupCache<ApiKeyPrincipal>;

  constructor(
    private readonly tasks: TasksApi,
    ttlMs: number,
  ) {
    this.cache = new LookupCache<ApiKeyPrincipal>(ttlMs, {
      tags: (principal) => [apiKeyTag(principal.apiKeyId), memberTag(principal.workspaceId, principal.userId)],
    });
  }

  /** Evicts the cached lookups of a revoked key; returns how many there were. */
  revokeKey(apiKeyId: string): number {
    return this.cache.invalidate(apiKeyTag(apiKeyId));
  }

  /** Evicts the cached lookups of every key a member created in a workspace (their membership ended). */
  revokeMember(workspaceId: string, userId: string): number {
    return this.cache.invalidate(memberTag(workspaceId, userId));
  }

  /** The principal when the key is known valid without a backend call (recent success). */
  cached(hash: string): ApiKeyPrincipal | undefined {
    return this.cache.peek(hash);
  }

  /**
   * Resolves to the principal, or null for an unknown/revoked/malformed key; rejects on backend
   * failure. `beforeLookup` runs only when this call is about to start a backend lookup (not for a
   * malformed key, a remembered success, or a lookup of the same key already in flight, which is
   * joined); it may throw to refuse the lookup.
   */
  async authenticate(key: string, hash: string, beforeLookup: () => void = () => undefined): Promise<ApiKeyPrincipal | null> {
    if (key.length === 0 || key.length > maxKeyLength) return null;
    if (this.cache.peek(hash) === undefined && !this.cache.isLoading(hash)) beforeLookup();
    try {
      return await this.cache.get(hash, async () => {
        const found = await this.tasks.AuthenticateApiKey({ key });
        return {
          workspaceId: found.workspaceId,
          kind: 'apiKey',
          apiKeyId: found.apiKeyId,
          apiKeyName: found.apiKeyName,
          userId: found.userId,
        };
      });
    } catch (error) {
      if (isGrpcError(error) && rejectionCodes.has(error.code)) return null;
      throw error;
    }
  }
}

/** Backend answers that mean "this key does not authenticate" rather than "the backend failed". */
const rejectionCodes = new Set<GrpcStatus>([GrpcStatus.UNAUTHENTICATED, GrpcStatus.NOT_FOUND, GrpcStatus.INVALID_ARGUMENT]);
