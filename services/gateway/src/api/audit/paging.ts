import { z } from 'zod';
import type { AuditEvent__Output } from '@tws/proto-types/generated/audit/v1/AuditEvent';
import { opaqueCursor } from '../schemas/cursor.js';

/*
 * GET /v1/audit: one cursor over three sources. Each of tasks, attachments and webhooks answers its
 * own newest events older than the cursor; the gateway merges them by (at desc, id desc) and keeps
 * the first `limit`. The cursor is the (at, id) of the last event of a page, so the next page starts
 * strictly after it in every source: nothing is lost or repeated across pages.
 */

export const maxAuditLimit = 200;
export const defaultAuditLimit = 50;
const maxCursorLength = 120;

/** A place in the merged order: events strictly older are on the next page. */
export interface AuditCursor {
  atMs: number;
  id: string;
}

const cursors = opaqueCursor('tws.audit-cursor.v1', z.tuple([z.literal(1), z.int().min(0).max(8_640_000_000_000_000), z.guid().max(36)]), maxCursorLength);

/** Opaque: base64url JSON of the place, then a checksum (not a secret: it makes an edited cursor a clear 400). */
export const encodeAuditCursor = (cursor: AuditCursor): string => cursors.encode([1, cursor.atMs, cursor.id]);

/** The place a cursor names, or null for anything `encodeAuditCursor` did not write. */
export function decodeAuditCursor(text: string): AuditCursor | null {
  const payload = cursors.decode(text);
  return payload === null ? null : { atMs: payload[1], id: payload[2].toLowerCase() };
}

/** Newest first: `at` descending, then id descending (the order every source's index walks). */
export function compareAuditEvents(a: Pick<AuditEvent__Output, 'atMs' | 'id'>, b: Pick<AuditEvent__Output, 'atMs' | 'id'>): number {
  const byTime = Number(b.atMs) - Number(a.atMs);
  if (byTime !== 0) return byTime;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * One page of the merged sources: each source's answer holds its newest `limit + 1` events after the
 * cursor, so the merged first `limit` are the page, and a next page exists when more remain.
 */
export function mergeAuditPages<E extends Pick<AuditEvent__Output, 'atMs' | 'id'>>(sources: E[][], limit: number): { events: E[]; next: AuditCursor | null } {
  const merged = sources.flat().sort(compareAuditEvents);
  const events = merged.slice(0, limit);
  const last = events.at(-1);
  return { events, next: merged.length > limit && last !== undefined ? { atMs: Number(last.atMs), id: last.id } : null };
}

/** The absolute URL of the next page (PUBLIC_BASE_URL, never the request's Host), as `Link` wants it. */
export function nextAuditLink(publicBaseUrl: string, limit: number, next: AuditCursor): string {
  const params = new URLSearchParams({ limit: String(limit), cursor: encodeAuditCursor(next) });
  return `<${publicBaseUrl.replace(/\/+$/, '')}/v1/audit?${params.toString()}>; rel="next"`;
}
