import { createHash } from 'node:crypto';
import type { Principal } from './auth/principal.js';

/**
 * Idempotency-Key rules of the gateway (docs/api.md "Idempotency-Key", issue #18 item 1), without HTTP:
 * the key's form, the request's fingerprint, and which answers are stored for replay.
 */

/** 1..255 visible ASCII characters (no spaces, no controls): a UUID, a ULID, any client's token. */
export const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;
/** The same pattern in the form OpenAPI (ECMA-262, and schemathesis' generators) reads. */
export const idempotencyKeyJsonPattern = '^[!-~]{1,255}$';
export const maxIdempotencyKeyLength = 255;
/** Answers larger than this are not stored (the request's effect stays; a retry runs again). */
export const maxStoredBodyBytes = 65_536;

export const invalidKeyMessage = `Idempotency-Key header must be 1-${maxIdempotencyKeyLength} visible ASCII characters`;

/** The header's key, or undefined when it is not a valid key. */
export function parseIdempotencyKey(header: string | string[]): string | undefined {
  // Sent twice: node joins the values with ", ", which has a space and fails the pattern anyway.
  const value = Array.isArray(header) ? header.join(', ') : header;
  return idempotencyKeyPattern.test(value) ? value : undefined;
}

/** Who sent the request: two credentials of one workspace sending one key are two different requests. */
export function credentialOf(principal: Principal): string {
  return principal.kind === 'apiKey' ? `apiKey:${principal.apiKeyId}` : `user:${principal.userId}`;
}

export interface RequestIdentity {
  method: string;
  /** The route template, e.g. `/v1/tasks/:id/comments`. */
  route: string;
  /** The path parameters as sent (strings). */
  params: Readonly<Record<string, string>>;
  /** The query string as sent, without `?` ('' when none). */
  query: string;
  credential: string;
  /** SHA-256 of the raw body bytes as received. */
  bodyDigest: Buffer;
}

/**
 * SHA-256 over what makes a request itself: method, route template, path parameters, query,
 * credential and the raw body's digest. A JSON array of strings, so no two different inputs encode
 * alike; parameters sorted by name. Raw bytes, not the parsed body: a retry resends the same bytes,
 * and bytes are what the client can compare itself.
 */
export function fingerprintOf(identity: RequestIdentity): Buffer {
  const params = Object.keys(identity.params)
    .sort()
    .flatMap((name) => [name, identity.params[name] ?? '']);
  const encoded = JSON.stringify([identity.method.toUpperCase(), identity.route, params, identity.query, identity.credential, identity.bodyDigest.toString('hex')]);
  return createHash('sha256').update(encoded).digest();
}

/**
 * Whether an answer is stored and replayed (IETF draft-ietf-httpapi-idempotency-key-header, as
 * Stripe does): every 2xx, and the 4xx that are this request's definite outcome (400 from a backend
 * rule, 403 plan limit, 404, 409 conflict with stored data, 412, 422). Not stored, so a retry runs
 * again: 5xx (the backend failed or is unavailable), 401 (credentials), 408, 425 and 429 (try later).
 * Validation failures (400, 413, 415) happen before the key is claimed and are never stored.
 */
export function isStoredStatus(status: number): boolean {
  if (status >= 200 && status < 300) return true;
  if (status < 400 || status >= 500) return false;
  return status !== 401 && status !== 408 && status !== 425 && status !== 429;
}
