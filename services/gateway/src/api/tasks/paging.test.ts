import { describe, expect, it } from 'vitest';
import { checkOf, decodeCursor, encodeCursor, isPaged, nextPageLink, pageRequest, TaskListQuery, type TaskListCursor } from './paging.js';

const projectId = '7d1c1c2e-36c1-4b7e-9f55-0a7f8d0f3c11';
const place: TaskListCursor = { projectId, sectionId: 'a1d2c3b4-0000-4000-8000-000000000001', position: 41, number: 1234 };

describe('task list cursor', () => {
  it('round-trips a list place, opaque and URL-safe', () => {
    const cursor = encodeCursor(place);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{12}$/);
    expect(decodeCursor(cursor)).toEqual(place);
    expect(decodeCursor(encodeCursor({ ...place, position: -3, number: 2 ** 31 - 1 }))).toEqual({ ...place, position: -3, number: 2 ** 31 - 1 });
  });

  it('refuses every single-character edit, a cut, and anything not written by encodeCursor', () => {
    const cursor = encodeCursor(place);
    const alphabet = 'AbZ09-_';
    for (let index = 0; index < cursor.length; index++) {
      for (const replacement of alphabet) {
        if (cursor[index] === replacement || cursor[index] === '.') continue;
        expect(decodeCursor(cursor.slice(0, index) + replacement + cursor.slice(index + 1))).toBeNull();
      }
    }
    expect(decodeCursor(cursor.slice(0, -1))).toBeNull();
    expect(decodeCursor(cursor.slice(1))).toBeNull();
    for (const junk of ['', '.', 'abc', 'x'.repeat(5000), `${cursor}.${cursor}`, Buffer.from('[1]').toString('base64url')]) {
      expect(decodeCursor(junk)).toBeNull();
    }
  });

  it('refuses a payload with a valid checksum but the wrong shape', () => {
    const forge = (payload: unknown): string => {
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${body}.${checkOf(body)}`;
    };
    expect(decodeCursor(forge([1, projectId, place.sectionId, 41, 1234]))).toEqual(place);
    expect(decodeCursor(forge([2, projectId, place.sectionId, 1, 1]))).toBeNull();
    expect(decodeCursor(forge([1, 'nope', place.sectionId, 1, 1]))).toBeNull();
    expect(decodeCursor(forge([1, projectId, place.sectionId, 1.5, 1]))).toBeNull();
    expect(decodeCursor(forge([1, projectId, place.sectionId, 2 ** 31, 1]))).toBeNull();
    expect(decodeCursor(forge({ projectId }))).toBeNull();
    expect(decodeCursor(`${Buffer.from('{').toString('base64url')}.${checkOf(Buffer.from('{').toString('base64url'))}`)).toBeNull();
  });
});

describe('task list query', () => {
  const parse = (query: Record<string, unknown>) => TaskListQuery.safeParse(query);

  it('no parameter: the whole list, as before', () => {
    const parsed = parse({});
    expect(parsed.success && isPaged(parsed.data)).toBe(false);
  });

  it('accepts each bounded parameter and asks for a page', () => {
    for (const query of [
      { limit: '1' },
      { limit: '500' },
      { cursor: encodeCursor(place) },
      { isCompleted: 'true' },
      { isCompleted: 'false' },
      { statusId: place.sectionId },
      { assigneeId: 'none' },
      { assigneeId: place.sectionId },
      { listId: place.sectionId },
      { updatedSince: '2026-11-25T01:02:03Z' },
      { updatedSince: '2026-11-25T01:02:03.123456+02:00' },
    ]) {
      const parsed = parse(query);
      expect(parsed.success, JSON.stringify(query)).toBe(true);
      expect(parsed.success && isPaged(parsed.data)).toBe(true);
    }
  });

  it('refuses out-of-range, malformed and repeated values', () => {
    for (const query of [
      { limit: '0' },
      { limit: '501' },
      { limit: '1.5' },
      { limit: 'ten' },
      { limit: ['1', '2'] },
      { cursor: '' },
      { cursor: 'x'.repeat(201) },
      { isCompleted: 'yes' },
      { isCompleted: '1' },
      { statusId: 'not-a-uuid' },
      { assigneeId: 'nobody' },
      { listId: `${place.sectionId}x` },
      { updatedSince: '2026-11-25' },
      { updatedSince: '2026-11-25T01:02:03' },
      { updatedSince: 'yesterday' },
    ]) {
      expect(parse(query).success, JSON.stringify(query)).toBe(false);
    }
  });

  it('maps filters to the RPC; "none" means unassigned; the default page size applies', () => {
    const query = TaskListQuery.parse({ isCompleted: 'false', assigneeId: 'none', listId: place.sectionId, updatedSince: '2026-11-25T01:02:03Z' });
    expect(pageRequest('w', projectId, query)).toEqual({
      workspaceId: 'w',
      projectId,
      limit: 100,
      isCompleted: false,
      unassigned: true,
      listId: place.sectionId,
      updatedSince: '2026-11-25T01:02:03Z',
    });
    const withCursor = pageRequest('w', projectId.toUpperCase(), TaskListQuery.parse({ limit: '7', cursor: encodeCursor(place) }));
    expect(withCursor).toMatchObject({ limit: 7, after: { sectionId: place.sectionId, position: 41, number: 1234 } });
  });

  it('a malformed cursor or one of another project is a 400', () => {
    expect(() => pageRequest('w', projectId, TaskListQuery.parse({ cursor: 'abc.def' }))).toThrow(expect.objectContaining({ statusCode: 400 }));
    const other = encodeCursor({ ...place, projectId: 'a1d2c3b4-0000-4000-8000-000000000009' });
    expect(() => pageRequest('w', projectId, TaskListQuery.parse({ cursor: other }))).toThrow(/another task list/);
  });

  it('the next link is absolute on the public base URL and keeps the page size and filters', () => {
    const query = TaskListQuery.parse({ limit: '2', assigneeId: 'none', isCompleted: 'true' });
    const link = nextPageLink('https://api.example.com/', projectId, query, { sectionId: place.sectionId, position: 41, number: 1234 });
    const match = /^<(https:\/\/api\.example\.com\/v1\/projects\/[^>]+)>; rel="next"$/.exec(link);
    expect(match).not.toBeNull();
    const url = new URL(match![1]!);
    expect(url.pathname).toBe(`/v1/projects/${projectId}/tasks`);
    expect(Object.fromEntries(url.searchParams)).toEqual({ limit: '2', isCompleted: 'true', assigneeId: 'none', cursor: encodeCursor(place) });
  });
});
