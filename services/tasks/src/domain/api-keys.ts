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

/** How many characters of a key the settings show to recognise it ("tws_" and 4 random ones). */
export const displayPrefixLength = 8;

export function displayPrefix(key: string): string {
  return key.slice(0, displayPrefixLength);
}

/** Live keys one member may hold in a workspace (and so the most a settings list can have per member). */
export const maxLiveKeysPerMember = 100;
