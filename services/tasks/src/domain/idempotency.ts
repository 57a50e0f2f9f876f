import { randomUUID } from 'node:crypto';
import { invalid, isUuid, type Queryable } from '@tws/common';
import { claimKey, findKey, releaseClaim, storeAnswer, type StoredAnswer } from '../store/idempotency.js';

/** The Idempotency-Key header's form (the gateway checks it first): 1..255 visible ASCII characters. */
export const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;
/** Largest answer body stored; the gateway does not ask to store a larger one. */
export const maxStoredBodyBytes = 65_536;
const maxContentTypeLength = 255;

export interface IdempotencySettings {
  /** How long an answer (and a claim) is kept. */
  ttlMs: number;
  /** A claim without an answer for this long is abandoned (its gateway crashed or lost the backend). */
  lockTimeoutMs: number;
}

export type BeginOutcome =
  | { outcome: 'proceed'; claimToken: string }
  | { outcome: 'replay'; answer: StoredAnswer }
  | { outcome: 'mismatch' }
  | { outcome: 'in_progress' };

interface KeyRef {
  workspaceId: string;
  key: string;
}

function checkKeyRef(ref: KeyRef): KeyRef {
  if (!isUuid(ref.workspaceId)) throw invalid('workspace_id must be a UUID');
  if (!idempotencyKeyPattern.test(ref.key)) throw invalid('key must be 1..255 visible ASCII characters');
  return { workspaceId: ref.workspaceId.toLowerCase(), key: ref.key };
}

function checkClaimToken(token: string): string {
  if (!isUuid(token)) throw invalid('claim_token must be a UUID');
  return token.toLowerCase();
}

/**
 * Begin: claim the key, or say why not. A claim and a read are two statements; when the row read
 * between them has gone (released by a failed execution, or swept), the claim is tried again.
 */
export async function beginIdempotentRequest(db: Queryable, settings: IdempotencySettings, request: KeyRef & { fingerprint: Buffer }): Promise<BeginOutcome> {
  const ref = checkKeyRef(request);
  if (request.fingerprint.length !== 32) throw invalid('fingerprint must be 32 bytes (SHA-256)');
  for (let attempt = 0; attempt < 3; attempt++) {
    const claimToken = randomUUID();
    if (await claimKey(db, { ...ref, fingerprint: request.fingerprint, claimToken, ...settings })) return { outcome: 'proceed', claimToken };
    const existing = await findKey(db, ref.workspaceId, ref.key);
    if (!existing) continue;
    if (!existing.fingerprint.equals(request.fingerprint)) return { outcome: 'mismatch' };
    return existing.state === 'answered' ? { outcome: 'replay', answer: existing.answer } : { outcome: 'in_progress' };
  }
  // The key keeps being claimed and released by others: as good as in progress.
  return { outcome: 'in_progress' };
}

/** Complete: stores the answer of a claim; false when the claim is no longer held. */
export async function completeIdempotentRequest(
  db: Queryable,
  settings: IdempotencySettings,
  request: KeyRef & { claimToken: string; answer: StoredAnswer },
): Promise<boolean> {
  const ref = checkKeyRef(request);
  const claimToken = checkClaimToken(request.claimToken);
  const { statusCode, contentType, body } = request.answer;
  if (!Number.isInteger(statusCode) || statusCode < 200 || statusCode > 499) throw invalid('status_code must be 200..499');
  if (contentType.length > maxContentTypeLength) throw invalid(`content_type must be at most ${maxContentTypeLength} characters`);
  if (body.length > maxStoredBodyBytes) throw invalid(`body must be at most ${maxStoredBodyBytes} bytes`);
  return storeAnswer(db, { ...ref, claimToken, ttlMs: settings.ttlMs }, request.answer);
}

/** Release: forgets a claim, so the next request with the key runs. */
export async function releaseIdempotentRequest(db: Queryable, request: KeyRef & { claimToken: string }): Promise<void> {
  await releaseClaim(db, { ...checkKeyRef(request), claimToken: checkClaimToken(request.claimToken) });
}
