/**
 * Opt-in paging and filters of GET /v1/projects/:projectId/tasks (issue 21 item 2) through the real
 * stack: pages in display order that concatenate to the whole list, keyset-stable while tasks are
 * added between pages, each filter alone and combined with paging, the cursor refused when edited or
 * of another project, the Link header built on PUBLIC_BASE_URL, and the answer without parameters as
 * it was (the whole list, its list ETag, only `updatedAt` added to each task).
 */
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, type ApiResponse } from '../support/api.js';
import {
  createProject,
  createSection,
  createTask,
  expectError,
  expectStatus,
  getTask,
  patchTask,
  TIMESTAMP,
  type CreatedProject,
  type ListedTask,
} from '../support/fixtures.js';
import { taskFixture } from '../support/task-fixture.js';
import { pageSql } from '../../services/tasks/src/store/task-list-page.js';

describe('task list paging and filters', () => {
  const fx = taskFixture();
  let db: pg.Client;
  beforeAll(async () => {
    db = new pg.Client({ connectionString: inject('stack').databaseUrl, options: '-c search_path=tasks' });
    await db.connect();
  });
  afterAll(async () => db.end());

  const get = (path: string, headers: Record<string, string> = {}): Promise<ApiResponse<ListedTask[]>> =>
    api<ListedTask[]>('GET', path, { credentials: fx.key, headers });
  const listPath = (projectId: string, query = ''): string => `/v1/projects/${projectId}/tasks${query === '' ? '' : `?${query}`}`;

  /** The path and query of a `Link: <…>; rel="next"` header, checked to be absolute on the public base URL; null when absent. */
  const nextOf = (response: ApiResponse): string | null => {
    const link = response.headers.get('link');
    if (link === null) return null;
    const match = /^<([^>]+)>; rel="next"$/.exec(link);
    expect(match, link).not.toBeNull();
    const url = new URL(match![1]!);
    expect(url.origin).toBe(new URL(inject('stack').gatewayUrl).origin);
    return `${url.pathname}${url.search}`;
  };

  /** Every page from `first` on, following Link until it is absent. */
  const allPages = async (first: string, between?: (page: number) => Promise<void>): Promise<Array<ApiResponse<ListedTask[]>>> => {
    const pages: Array<ApiResponse<ListedTask[]>> = [];
    for (let path: string | null = first; path !== null; ) {
      const response = await get(path);
      expectStatus(response, 200);
      pages.push(response);
      expect(pages.length).toBeLessThan(200);
      await between?.(pages.length);
      path = nextOf(response);
    }
    return pages;
  };

  /** A project with tasks in two sections: 7 in the default one, 5 in the second (created interleaved). */
  const seeded = async (): Promise<{ project: CreatedProject; second: string }> => {
    const project = await createProject(fx.key);
    const second = (await createSection(fx.key, project.id, 'Second')).id;
    for (let index = 0; index < 12; index++) {
      const listId = index % 2 === 0 || index > 9 ? project.defaultListId : second;
      await createTask(fx.key, { projectId: project.id, listId, name: `Task ${index}` });
    }
    return { project, second };
  };

  it('without parameters answers the whole list as before: its list ETag, no Link, only updatedAt added', async () => {
    const { project } = await seeded();
    const whole = await get(listPath(project.id));
    expectStatus(whole, 200);
    expect(whole.headers.get('link')).toBeNull();
    const tag = whole.headers.get('etag');
    expect(tag).toMatch(/^"l\d+"$/);
    expectStatus(await get(listPath(project.id), { 'if-none-match': tag! }), 304);
    // An unknown parameter changes nothing: the same bytes.
    expect((await get(listPath(project.id, 'unknown=1'))).text).toBe(whole.text);
    // The bytes are the contract's list shape in its key order, with `updatedAt` the one addition.
    const withoutUpdatedAt = whole.text.replace(/,"updatedAt":"[^"]*"/g, '');
    const old = whole.body.map((task) => ({
      id: task.id, number: task.number, name: task.name, isCompleted: task.isCompleted, description: task.description,
      listId: task.listId, assigneeId: task.assigneeId, statusId: task.statusId, order: task.order, createdAt: task.createdAt,
    }));
    expect(withoutUpdatedAt).toBe(JSON.stringify(old));
    for (const task of whole.body) expect(task.updatedAt).toMatch(TIMESTAMP);
  });

  it('pages concatenate to the unpaged list, byte for byte, in display order', async () => {
    const { project } = await seeded();
    const whole = await get(listPath(project.id));
    for (const limit of [1, 5, 12, 500]) {
      const pages = await allPages(listPath(project.id, `limit=${limit}`));
      expect(pages.length).toBe(Math.ceil(12 / limit));
      for (const page of pages.slice(0, -1)) expect(page.body).toHaveLength(limit);
      expect(`[${pages.map((page) => page.text.slice(1, -1)).filter((part) => part !== '').join(',')}]`).toBe(whole.text);
      for (const page of pages) expect(page.headers.get('etag')).toMatch(/^"[\x21\x23-\x7e]+"$/);
    }
    expect(nextOf(await get(listPath(project.id, 'limit=12')))).toBeNull();
  });

  it('tasks added between pages make no task be lost or repeated', async () => {
    const { project, second } = await seeded();
    const before = (await get(listPath(project.id))).body.map((task) => task.id);
    const added: string[] = [];
    const pages = await allPages(listPath(project.id, 'limit=2'), async () => {
      // Into both sections, including the one being read and the one already passed.
      for (const listId of [project.defaultListId, second]) added.push((await createTask(fx.key, { projectId: project.id, listId })).id);
    });
    const seen = pages.flatMap((page) => page.body.map((task) => task.id));
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
    for (const id of seen) expect([...before, ...added]).toContain(id);
    // Whatever was seen is in the order the unpaged list now has.
    const now = (await get(listPath(project.id))).body.map((task) => task.id);
    expect(now.filter((id) => seen.includes(id))).toEqual(seen);
  });

  it('filters by isCompleted, statusId, assigneeId (and none), listId and updatedSince, alone and with paging', async () => {
    const { project, second } = await seeded();
    const all = (await get(listPath(project.id))).body;
    const [done, custom, assigned] = [all[0]!, all[1]!, all[8]!];
    await patchTask(fx.key, done.id, { isCompleted: true });
    await patchTask(fx.key, custom.id, { statusId: fx.custom.id });
    await patchTask(fx.key, assigned.id, { assigneeId: fx.member.userId });
    const now = (await get(listPath(project.id))).body;
    const ids = (response: ApiResponse<ListedTask[]>): string[] => {
      expectStatus(response, 200);
      return response.body.map((task) => task.id);
    };
    const expectFilter = async (query: string, keep: (task: ListedTask) => boolean): Promise<void> => {
      const expected = now.filter(keep).map((task) => task.id);
      expect(ids(await get(listPath(project.id, query))), query).toEqual(expected);
      const paged = await allPages(listPath(project.id, `${query}&limit=1`));
      expect(paged.flatMap((page) => page.body.map((task) => task.id)), `${query} paged`).toEqual(expected);
    };
    await expectFilter('isCompleted=true', (task) => task.isCompleted);
    await expectFilter('isCompleted=false', (task) => !task.isCompleted);
    await expectFilter(`statusId=${fx.custom.id}`, (task) => task.statusId === fx.custom.id);
    await expectFilter(`assigneeId=${fx.member.userId}`, (task) => task.assigneeId === fx.member.userId);
    await expectFilter('assigneeId=none', (task) => task.assigneeId === null);
    await expectFilter(`listId=${second}`, (task) => task.listId === second);
    await expectFilter(`listId=${second}&isCompleted=false&assigneeId=none`, (task) => task.listId === second && !task.isCompleted && task.assigneeId === null);
    expect(now.filter((task) => task.isCompleted)).toHaveLength(1);
    expect(now.filter((task) => task.listId === second).length).toBeGreaterThan(1);

    // updatedSince: the tasks changed at or after a time, not the others; the time is inclusive.
    const since = (await getTask(fx.key, assigned.id)).updatedAt;
    const later = now.filter((task) => Date.parse(task.updatedAt) >= Date.parse(since)).map((task) => task.id);
    expect(later).toContain(assigned.id);
    expect(later).not.toContain(all[11]!.id);
    expect(ids(await get(listPath(project.id, `updatedSince=${encodeURIComponent(since)}`)))).toEqual(later);
    const shifted = new Date(Date.parse(since) + 1).toISOString().replace('Z', '+00:00');
    expect(ids(await get(listPath(project.id, `updatedSince=${encodeURIComponent(shifted)}`)))).not.toContain(assigned.id);
    expect(ids(await get(listPath(project.id, 'updatedSince=2999-01-01T00:00:00Z')))).toEqual([]);
  });

  it('updatedAt moves with a change in both shapes and stays with the rest of the list', async () => {
    const task = await fx.freshTask();
    expect(task.updatedAt).toBe(task.createdAt);
    const patched = await api<{ updatedAt: string }>('PATCH', `/v1/tasks/${task.id}`, { credentials: fx.key, body: { name: 'Renamed' } });
    expectStatus(patched, 200);
    expect(Date.parse(patched.body.updatedAt)).toBeGreaterThan(Date.parse(task.updatedAt));
    expect((await getTask(fx.key, task.id)).updatedAt).toBe(patched.body.updatedAt);
    expect((await fx.listed(fx.project.id, task.id))?.updatedAt).toBe(patched.body.updatedAt);
  });

  it('a malformed, edited or cut cursor is a 400, and so is one of another project', async () => {
    const { project } = await seeded();
    const next = nextOf(await get(listPath(project.id, 'limit=3')))!;
    const cursor = new URL(next, 'http://x').searchParams.get('cursor')!;
    expectStatus(await get(listPath(project.id, `limit=3&cursor=${cursor}`)), 200);
    const flipped = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
    for (const bad of [flipped, cursor.slice(0, -1), `${cursor}x`, 'abc', 'x'.repeat(201), '%00']) {
      expectError(await get(listPath(project.id, `cursor=${encodeURIComponent(bad)}`)), 400);
    }
    const other = await seeded();
    expectError(await get(listPath(other.project.id, `limit=3&cursor=${cursor}`)), 400);
    expectError(await get(listPath('00000000-0000-4000-8000-000000000000', `cursor=${cursor}`)), 400);
    expectError(await get(listPath('00000000-0000-4000-8000-000000000000', 'limit=3')), 404);
  });

  it('refuses out-of-range and malformed parameters with 400', async () => {
    const { project } = await seeded();
    for (const query of ['limit=0', 'limit=501', 'limit=x', 'limit=1&limit=2', 'isCompleted=yes', 'statusId=nope', 'assigneeId=nobody',
      'listId=1', 'updatedSince=2026-11-25', 'updatedSince=yesterday']) {
      expectError(await get(listPath(project.id, query)), 400);
    }
  });

  it('builds the next link from PUBLIC_BASE_URL, never from forwarded or Host headers', async () => {
    const { project } = await seeded();
    const response = await get(listPath(project.id, 'limit=2'), { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' });
    expect(response.headers.get('link')).not.toContain('evil.example');
    expect(nextOf(response)).toMatch(new RegExp(`^/v1/projects/${project.id}/tasks\\?limit=2&cursor=`));
  });

  it('migration 015 re-renders, in committed batches, the list JSON of tasks written before 013', async () => {
    const task = await fx.freshTask();
    const rendered = async (): Promise<{ json: string; updated: string }> =>
      (await db.query<{ json: string; updated: string }>('SELECT list_json AS json, updated_at::text AS updated FROM tasks WHERE id = $1', [task.id])).rows[0]!;
    const current = await rendered();
    const before013 = current.json.replace(/,"updatedAt":"[^"]*"/, '');
    expect(before013).not.toBe(current.json);
    // Written as 005's trigger wrote it (this session only skips the triggers).
    await db.query('SET session_replication_role = replica');
    await db.query('UPDATE tasks SET list_json = $2 WHERE id = $1', [task.id, before013]);
    await db.query('RESET session_replication_role');
    expect((await rendered()).json).toBe(before013);
    // As the migrate command runs a no-transaction migration: one statement, extended protocol.
    const sql = await readFile(new URL('../../services/tasks/migrations/015_task_list_json_backfill.sql', import.meta.url), 'utf8');
    await db.query({ text: sql, queryMode: 'extended' } as pg.QueryConfig);
    expect(await rendered()).toEqual(current);
  });

  it('the page query walks indexes: sections by position, each section\'s tasks by position (EXPLAIN)', async () => {
    const { project } = await seeded();
    const first = (await get(listPath(project.id))).body[0]!;
    // A tiny test table would be read whole anyway; forbid that to see the plan the query has on a big one.
    await db.query('BEGIN');
    try {
      await db.query('SET LOCAL enable_seqscan = off');
      const after = { sectionId: first.listId, position: first.order, number: first.number };
      const explain = async (filters: unknown[]): Promise<string> => {
        const values = [fx.ws.workspace.id, project.id, after.sectionId, after.position, after.number, ...filters, 100, 1 << 20];
        const { rows } = await db.query<{ 'QUERY PLAN': unknown }>({ text: `EXPLAIN (FORMAT JSON) ${pageSql}`, values });
        return JSON.stringify(rows[0]!['QUERY PLAN']);
      };
      const plain = await explain([null, null, false, null, null, null]);
      expect(plain).toContain('tasks_section_position_number_idx');
      // The walk starts at the key (an index condition), not at the section's first task (a filter).
      expect(plain).toMatch(/"Index Cond":"[^"]*ROW\(\\"position\\", number\) > ROW\(/);
      expect(plain).toMatch(/sections_project_position_idx|sections_pkey/);
      expect(plain).not.toContain('"Seq Scan"');
      // With filters the planner may pick another of the tasks' indexes (status, assignee: it depends on what the
      // shared test database holds by then); any index walk will do, a full scan never.
      const filtered = await explain([false, fx.todo.id, true, null, project.defaultListId, '2026-01-01T00:00:00Z']);
      expect(filtered).toMatch(/"Index (Only )?Scan"|"Bitmap Index Scan"/);
      expect(filtered).not.toContain('"Seq Scan"');
    } finally {
      await db.query('ROLLBACK');
    }
  });
});

