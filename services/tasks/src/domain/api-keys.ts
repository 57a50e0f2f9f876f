import { createHash } from 'node:crypto';
import { randomString } from './identifiers.js';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A recognisable prefix secret scanners can match, then 40 random base62 characters (~238 bits). */
export const apiKeyPrefix = 'tws_';
const apiKeyPattern = /^tws_[0-9A-Za-z]{40}$/;

export function generateApiKey(): string {
  return `${apiKeyPrefix}${randomString(base62, 40)}`;
}

/** Whether a string can be an API key at all (saves a database round trip for garbage). */
export function looksLikeApiKey(key: string): boolean {
  return apiKeyPattern.test(key);
}

/** Only this hash is stored; a high-entropy key needs no slow hash. */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}
