import { hash } from 'node:crypto';

/*
 * Strong entity tags (RFC 9110 §8.8.3) for representations served as pre-rendered bytes. The
 * gateway tags what it sends and the tasks service checks `If-Match` against the task as it would
 * be sent now, so both compute the tag with this one function over the same bytes.
 */

/**
 * The strong tag of a representation: a SHA-1 of its bytes (not a security property here, only a
 * collision-free-in-practice fingerprint; OpenSSL hashes ~1 GB/s, a task of a few KB costs
 * microseconds), base64url, quoted.
 */
export function entityTagOf(bytes: Uint8Array): string {
  return `"${hash('sha1', bytes, 'base64url')}"`;
}

/** Most tags read from one `If-Match` / `If-None-Match` header; more is a 400. */
export const maxEntityTags = 64;

/** A parsed `If-Match` / `If-None-Match`: `*`, or the tags listed (each quoted; `weak` when sent as W/"…"). */
export type EntityTagCondition = { any: true } | { any: false; tags: Array<{ tag: string; weak: boolean }> };

// entity-tag = [ W/ ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text; list separated by commas.
const listItem = /^\s*(W\/)?("[\x21\x23-\x7e\x80-\xff]*")\s*(?:,|$)/;

/**
 * Parses a conditional header; null when it is malformed (the caller answers 400) or lists more
 * than `maxEntityTags` tags. Empty list elements (`a, , b`) are allowed, as RFC 9110 §5.6.1 says.
 */
export function parseEntityTags(header: string): EntityTagCondition | null {
  if (header.trim() === '*') return { any: true };
  const tags: Array<{ tag: string; weak: boolean }> = [];
  let rest = header;
  while (rest.trim() !== '') {
    const empty = /^\s*,/.exec(rest);
    if (empty) {
      rest = rest.slice(empty[0].length);
      continue;
    }
    const item = listItem.exec(rest);
    if (!item) return null;
    tags.push({ tag: item[2]!, weak: item[1] !== undefined });
    if (tags.length > maxEntityTags) return null;
    rest = rest.slice(item[0].length);
  }
  return tags.length === 0 ? null : { any: false, tags };
}

/** `If-None-Match` uses the weak comparison: W/"x" matches "x". */
export function noneMatchHolds(condition: EntityTagCondition, current: string): boolean {
  return !(condition.any || condition.tags.some((item) => item.tag === current));
}

/** `If-Match` uses the strong comparison: a weak tag never matches. */
export function strongTagsOf(condition: EntityTagCondition): string[] {
  return condition.any ? [] : condition.tags.filter((item) => !item.weak).map((item) => item.tag);
}
