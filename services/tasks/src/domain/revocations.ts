import { randomUUID } from 'node:crypto';
import { z } from 'zod';

/*
 * Revocations travel between the tasks replicas through Postgres LISTEN/NOTIFY (producer and
 * consumers are all this service, so the format lives here rather than in packages/contracts):
 * - `auth_revocations`: a revocation, notified in the transaction that made it (so it is heard
 *   exactly when it is committed, and never when it is rolled back);
 * - `auth_revocation_acks`: "the watchers of replica R applied revocation X" (RevokeApiKey waits
 *   for these from every replica that was listening when it committed).
 * Payloads are small JSON (Postgres caps a payload at 8000 bytes).
 */
export const revocationsChannel = 'auth_revocations';
export const revocationAcksChannel = 'auth_revocation_acks';

/**
 * What was revoked. `unknown`: a kind announced by a newer replica during a rolling upgrade; it is
 * forwarded as REVOCATION_KIND_UNSPECIFIED, which makes the gateways drop their whole caches.
 */
export type RevocationNotice =
  | { id: string; kind: 'api_key'; workspaceId: string; apiKeyId: string; at: number }
  | { id: string; kind: 'membership'; workspaceId: string; userId: string; at: number }
  | { id: string; kind: 'grant'; grantId: string; expiresAt: number; at: number }
  | { id: string; kind: 'unknown'; at: number };

export interface RevocationAck {
  id: string;
  replica: string;
}

/** An API key was revoked: the gateways evict its cached lookups. */
export function apiKeyRevoked(workspaceId: string, apiKeyId: string): RevocationNotice {
  return { id: randomUUID(), kind: 'api_key', workspaceId, apiKeyId, at: Date.now() };
}

/**
 * The membership of a user in a workspace ended or changed: the gateways evict the cached membership
 * and every cached lookup of the keys that user created there. Published by RemoveMember (whose
 * keys are deleted with the membership, so AuthenticateApiKey finds none) and ChangeMemberRole
 * (domain/member-settings.ts).
 */
export function membershipEnded(workspaceId: string, userId: string): RevocationNotice {
  return { id: randomUUID(), kind: 'membership', workspaceId, userId, at: Date.now() };
}

/**
 * An OAuth grant was revoked at the app's authorization server (AnnounceGrantRevocation): the
 * gateways refuse its access tokens (their `grant_id` claim) until `expiresAt`, when they lapse anyway.
 */
export function grantRevoked(grantId: string, expiresAt: number): RevocationNotice {
  return { id: randomUUID(), kind: 'grant', grantId, expiresAt, at: Date.now() };
}

/** A grant id as oidc-provider makes them (nanoid, 21 characters) and any sane one: bounded, URL-safe. */
export const grantIdSchema = z.string().min(1).max(128).regex(/^[A-Za-z0-9_-]+$/, 'must be a grant id (letters, digits, - and _)');

const known = z.discriminatedUnion('kind', [
  z.object({ id: z.uuid(), kind: z.literal('api_key'), workspaceId: z.uuid(), apiKeyId: z.uuid(), at: z.number() }),
  z.object({ id: z.uuid(), kind: z.literal('membership'), workspaceId: z.uuid(), userId: z.uuid(), at: z.number() }),
  z.object({ id: z.uuid(), kind: z.literal('grant'), grantId: grantIdSchema, expiresAt: z.number(), at: z.number() }),
]);
const anyKind = z.object({ id: z.uuid(), kind: z.string().max(64), at: z.number() });
const ackSchema = z.object({ id: z.uuid(), replica: z.string().min(1).max(64) });

function json(payload: string): unknown {
  try {
    return JSON.parse(payload);
  } catch {
    return undefined;
  }
}

/** Reads a notified revocation (tolerant: an unknown kind with an id still counts); undefined if unreadable. */
export function parseNotice(payload: string): RevocationNotice | undefined {
  const value = json(payload);
  const parsed = known.safeParse(value);
  if (parsed.success) return parsed.data;
  const other = anyKind.safeParse(value);
  if (other.success && !['api_key', 'membership', 'grant'].includes(other.data.kind)) {
    return { id: other.data.id, kind: 'unknown', at: other.data.at };
  }
  return undefined;
}

export function parseAck(payload: string): RevocationAck | undefined {
  const parsed = ackSchema.safeParse(json(payload));
  return parsed.success ? parsed.data : undefined;
}

/** The `application_name` of a replica's LISTEN session: how a revoker finds who must acknowledge. */
export const listenerNamePrefix = 'tasks-revocations:';
