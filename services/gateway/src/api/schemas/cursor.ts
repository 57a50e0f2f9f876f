import { createHash } from 'node:crypto';
import type { z } from 'zod';

/**
 * An opaque paging cursor: base64url JSON of a place in a list, then a 72-bit SHA-256 checksum under
 * the list's own domain string. Not a secret (a cursor names only a place in a list the caller may
 * read anyway): the checksum turns an edited, cut or foreign cursor into a clear 400 instead of a page
 * from somewhere else. Used by the task list (`api/tasks/paging.ts`) and the audit log (`api/audit/paging.ts`).
 */
export interface OpaqueCursor<Payload> {
  /** The checksum part of a cursor with this body (exported for tests). */
  checkOf(body: string): string;
  encode(payload: Payload): string;
  /** The payload a cursor names, or null for anything `encode` did not write. */
  decode(text: string): Payload | null;
}

export function opaqueCursor<Schema extends z.ZodType>(domain: string, schema: Schema, maxLength: number): OpaqueCursor<z.output<Schema>> {
  const checkOf = (body: string): string => createHash('sha256').update(`${domain}\0`).update(body).digest().subarray(0, 9).toString('base64url');
  return {
    checkOf,
    encode(payload) {
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${body}.${checkOf(body)}`;
    },
    decode(text) {
      if (text.length > maxLength) return null;
      const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{12})$/.exec(text);
      if (match === null || checkOf(match[1]!) !== match[2]) return null;
      let payload: unknown;
      try {
        payload = JSON.parse(Buffer.from(match[1]!, 'base64url').toString('utf8'));
      } catch {
        return null;
      }
      const parsed = schema.safeParse(payload);
      return parsed.success ? parsed.data : null;
    },
  };
}
