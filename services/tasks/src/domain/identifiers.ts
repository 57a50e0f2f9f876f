import { randomInt } from 'node:crypto';
import { isUuid as isUuidText } from '@tws/common';

/** Ids are UUIDs; anything else cannot name a row (and must never reach a `uuid` SQL parameter). */
export function isUuid(value: string | undefined | null): value is string {
  return typeof value === 'string' && isUuidText(value);
}

const base36 = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Uniformly random characters of `alphabet` (crypto.randomInt has no modulo bias). */
export function randomString(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** Words of a name with accents folded away, e.g. "Café  Déjà-vu 2" → ["Cafe", "Deja", "vu", "2"]. */
function words(name: string): string[] {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0);
}

/** A lowercase URL slug of a name (at most 40 characters), or `workspace` when nothing is left. */
export function slugify(name: string): string {
  const slug = words(name).join('-').toLowerCase().slice(0, 40).replace(/-+$/, '');
  return slug.length > 0 ? slug : 'workspace';
}

/** The workspace's `urlId`: its slug plus a short random suffix, e.g. `acme-corp-k3x9q2`. */
export function newUrlId(name: string): string {
  return `${slugify(name)}-${randomString(base36, 6)}`;
}

/**
 * A task prefix from a name: upper-case letters and digits, starting with a letter, 1–5 long.
 * Several words give their initials ("Mobile App Launch" → "MAL"), one word its first letters
 * ("Website" → "WEBS"); `fallback` when the name has no letter.
 */
export function deriveTaskPrefix(name: string, fallback: string): string {
  const parts = words(name).map((word) => word.toUpperCase());
  // Leading digits cannot start a prefix.
  while (parts.length > 0 && !/^[A-Z]/.test(parts[0]!)) {
    const stripped = parts[0]!.replace(/^[0-9]+/, '');
    if (stripped.length > 0) parts[0] = stripped;
    else parts.shift();
  }
  if (parts.length === 0) return fallback;
  let prefix: string;
  if (parts.length === 1) prefix = parts[0]!.slice(0, 4);
  else {
    prefix = parts
      .slice(0, 5)
      .map((part) => part[0])
      .join('');
    if (prefix.length < 2) prefix = parts[0]!.slice(0, 2);
  }
  return prefix;
}

/**
 * The first prefix based on `base` not in `taken`: `base`, then `base2`, `base3`, …
 */
export function firstFreePrefix(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
