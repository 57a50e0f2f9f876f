import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compareAuditEvents, decodeAuditCursor, encodeAuditCursor, mergeAuditPages, type AuditCursor } from './paging.js';

interface Event {
  id: string;
  atMs: string;
  source: number;
}

/** What one source answers: its newest `limit` events strictly after the cursor (as listAudit does). */
function answer(events: Event[], before: AuditCursor | null, limit: number): Event[] {
  return events
    .filter((event) => before === null || compareAuditEvents(event, { atMs: String(before.atMs), id: before.id }) > 0)
    .sort(compareAuditEvents)
    .slice(0, limit);
}

describe('audit paging', () => {
  it('round-trips a cursor and refuses edited, cut or foreign ones', () => {
    const cursor = { atMs: 1_764_000_000_123, id: randomUUID() };
    const text = encodeAuditCursor(cursor);
    expect(decodeAuditCursor(text)).toEqual(cursor);
    expect(decodeAuditCursor(text.slice(0, -1))).toBeNull();
    expect(decodeAuditCursor(`x${text}`)).toBeNull();
    const [body, check] = text.split('.');
    const edited = Buffer.from(JSON.stringify([1, 5, cursor.id])).toString('base64url');
    expect(decodeAuditCursor(`${edited}.${check}`)).toBeNull();
    expect(decodeAuditCursor(`${body}.${'A'.repeat(12)}`)).toBeNull();
    expect(decodeAuditCursor('a'.repeat(500))).toBeNull();
  });

  it('pages three sources merged newest first, with ties in one millisecond, losing and repeating nothing', () => {
    const sources: Event[][] = [[], [], []];
    for (let i = 0; i < 157; i += 1) {
      // Many events share a millisecond (one transaction writes several): the id breaks the tie.
      sources[i % 3]!.push({ id: randomUUID(), atMs: String(1_764_000_000_000 + Math.floor(i / 4)), source: i % 3 });
    }
    const expected = sources.flat().sort(compareAuditEvents).map((event) => event.id);
    for (const limit of [1, 7, 50, 200]) {
      const seen: string[] = [];
      let before: AuditCursor | null = null;
      for (let pages = 0; pages < 1_000; pages += 1) {
        const page = mergeAuditPages(
          sources.map((events) => answer(events, before, limit + 1)),
          limit,
        );
        seen.push(...page.events.map((event) => event.id));
        if (page.next === null) break;
        before = page.next;
      }
      expect(seen).toEqual(expected);
    }
  });

  it('has no next page when the sources hold exactly one page', () => {
    const events = [{ id: randomUUID(), atMs: '2', source: 0 }, { id: randomUUID(), atMs: '1', source: 1 }];
    expect(mergeAuditPages([answer(events, null, 3)], 2).next).toBeNull();
    expect(mergeAuditPages([answer(events, null, 2)], 1).next).not.toBeNull();
  });
});
