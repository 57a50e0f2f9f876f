import { invalid, type Pool } from '@tws/common';
import { z } from 'zod';
import { liveRevokedGrants, recordRevokedGrant, type RevokedGrantRow } from '../store/revoked-grants.js';
import type { Confirmation, Revocations } from './revocation-publisher.js';
import { grantIdSchema, grantRevoked } from './revocations.js';

/** Access tokens of the app's authorization server live an hour; a revocation is kept at most this long (plus skew). */
export const maxGrantRevocationMs = 2 * 60 * 60 * 1000;
/** The most revoked grants one ListRevokedGrants answers (a gateway past it checks each token's grant instead). */
export const maxListedGrants = 10_000;

const uuid = z.uuid();

/**
 * The app's authorization server revoked a grant (AnnounceGrantRevocation): recorded until its tokens
 * have expired, then pushed to every gateway replica, which refuse its tokens from then on. The
 * expiry is bounded (now < expiresAt ≤ now + 2 h: an hour's tokens and clock skew); already
 * expired, there is nothing left to refuse and nothing is recorded.
 */
export async function announceGrantRevocation(
  pool: Pool,
  revocations: Revocations,
  request: { grantId: string; expiresAtMs: number; actorUserId: string },
): Promise<Confirmation> {
  const grantId = grantIdSchema.safeParse(request.grantId);
  if (!grantId.success) throw invalid(`grant_id ${grantId.error.issues[0]?.message ?? 'is invalid'}`);
  const now = Date.now();
  if (!Number.isSafeInteger(request.expiresAtMs) || request.expiresAtMs > now + maxGrantRevocationMs) {
    throw invalid('expires_at_ms must be a time at most two hours ahead');
  }
  // Who revoked it is for the record only: anything but a user id is not kept.
  const actor = uuid.safeParse(request.actorUserId).success ? request.actorUserId : null;
  if (request.expiresAtMs <= now) return { confirmed: true, replicas: 0, missing: [], ms: 0 };
  const expiresAt = new Date(request.expiresAtMs);
  return revocations.publish(pool, grantRevoked(grantId.data, request.expiresAtMs), (db) =>
    recordRevokedGrant(db, grantId.data, expiresAt, actor),
  );
}

/** The live revoked grants (all, up to `limit`, or the one named), and whether there were more. */
export async function listRevokedGrants(pool: Pool, request: { grantId: string; limit: number }): Promise<{ grants: RevokedGrantRow[]; truncated: boolean }> {
  if (request.grantId !== '' && !grantIdSchema.safeParse(request.grantId).success) return { grants: [], truncated: false };
  const limit = request.limit === 0 ? maxListedGrants : Math.min(Math.max(request.limit, 1), maxListedGrants);
  const rows = await liveRevokedGrants(pool, limit + 1, request.grantId === '' ? undefined : request.grantId);
  return { grants: rows.slice(0, limit), truncated: rows.length > limit };
}
