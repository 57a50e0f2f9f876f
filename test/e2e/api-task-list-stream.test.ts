/**
 * Large task lists streamed through the real stack (issue 21 item 1): a list over one message is
 * read by the tasks service in one snapshot (StreamTasks) and piped through the gateway. It is the
 * same JSON array as the list of one message would be, byte for byte (and as the keyset pages
 * concatenate); writes made while it is read do not reach it (one snapshot, its version in the
 * ETag); a client that goes away mid-read ends the tasks service's transaction and frees its
 * connection. Tasks are seeded with SQL (test/support/seed-tasks.ts), not thousands of API calls.
 * Memory and time to first byte are the bench's (never timed here).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, type ApiResponse } from '../support/api.js';
import { planNodes, type PlanNode } from '../support/auto-explain.js';
import { createProject, createSection, createTask, expectStatus, patchTask, pollUntil, type CreatedProject, type ListedTask } from '../support/fixtures.js';
import { renderedList, seedTasks } from '../support/seed-tasks.js';
import { pausedGet, type PausedResponse } from '../support/paused-response.js';
import { taskFixture } from '../support/task-fixture.js';
import { inlineRowBytes, sectionRowsSql, snapshotApplicationName, snapshotSettings } from '../../services/tasks/src/store/task-list-stream.js';

describe('streamed task lists', () => {
  const fx = taskFixture();
  let db: pg.Client;
  beforeAll(async () => {
    db = new pg.Client({ connectionString: inject('stack').databaseUrl, options: '-c search_path=tasks' });
    await db.connect();
  });
  afterAll(async () => db.end());

  const headers = (): Record<string, string> => ({ 'x-api-key': 'apiKey' in fx.key ? fx.key.apiKey : '' });
  const listUrl = (projectId: string, query = ''): string => `${inject('stack').gatewayUrl}/v1/projects/${projectId}/tasks${query}`;

  /**
   * A project with two sections (and an empty one between) and `count` seeded tasks (plus one made through the API), every
   * `describedEvery`-th with a description of `descriptionBytes`: well over one message (1 MiB, 4,000 tasks).
   */
  const largeProject = async (count: number, describedEvery: number, descriptionBytes: number): Promise<CreatedProject> => {
    const project = await createProject(fx.key);
    // An empty section between the two: the walk (section by section) skips it.
    await createSection(fx.key, project.id, 'Empty');
    const second = (await createSection(fx.key, project.id, 'Second')).id;
    await createTask(fx.key, { projectId: project.id, listId: second, name: 'Made through the API' });
    await seedTasks(db, {
      workspaceId: fx.ws.workspace.id,
      projectId: project.id,
      sectionIds: [project.defaultListId, second],
      count,
      describedEvery,
      descriptionBytes,
      statusId: fx.todo.id,
    });
    return project;
  };

  /** Sessions of the tasks service holding a list snapshot open (store/task-list-stream.ts). */
  const openSnapshots = async (): Promise<number> =>
    (await db.query<{ open: number }>('SELECT count(*)::int AS open FROM pg_stat_activity WHERE application_name = $1', [snapshotApplicationName])).rows[0]!
      .open;

  it('answers the same bytes as the list of one message and as the keyset pages, streamed (no Content-Length), with the list ETag', async () => {
    // Every 7th task's list JSON is over inlineRowBytes: read alone, by id, in its place.
    const project = await largeProject(6_000, 7, inlineRowBytes + 1_000);
    const expected = await renderedList(db, project.id);
    expect(Buffer.byteLength(expected.json)).toBeGreaterThan(2 * 1024 * 1024);

    const response = await fetch(listUrl(project.id), { headers: headers() });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('etag')).toBe(`"l${expected.version}"`);
    const body = await response.text();
    expect(body.length).toBe(expected.json.length);
    expect(body === expected.json).toBe(true);

    // Task for task what the opt-in pages give, in the same order.
    const tasks = JSON.parse(body) as ListedTask[];
    expect(tasks).toHaveLength(6_001);
    const paged: ListedTask[] = [];
    for (let cursor: string | null = '?limit=500'; cursor !== null; ) {
      const page: ApiResponse<ListedTask[]> = await api<ListedTask[]>('GET', `/v1/projects/${project.id}/tasks${cursor}`, { credentials: fx.key });
      expectStatus(page, 200);
      paged.push(...page.body);
      const next: string | undefined = page.headers.get('link')?.match(/[?&]cursor=([^&>]+)/)?.[1];
      cursor = next === undefined ? null : `?limit=500&cursor=${next}`;
    }
    expect(paged.map((task) => task.id)).toEqual(tasks.map((task) => task.id));
    expect(paged).toEqual(tasks);

    // Conditional: the tag sent is current, so a 304 without a body (and nothing streamed).
    const again = await fetch(listUrl(project.id), { headers: { ...headers(), 'if-none-match': `"l${expected.version}"` } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(await pollUntil(openSnapshots, (open) => open === 0, { timeoutMs: 10_000 })).toBe(0);
  });

  it('is one snapshot: writes made while it is read are not in it, and the next read has them', async () => {
    // ~25 MB: far more than the buffers between the tasks service and this reader hold, so the
    // tasks service is still walking the list (held back by flow control) when the writes land.
    const project = await largeProject(4_000, 2, 12_000);
    const before = await renderedList(db, project.id);
    const listed = JSON.parse(before.json) as ListedTask[];
    const last = listed.at(-1)!;

    const response = await fetch(listUrl(project.id), { headers: headers() });
    expect(response.headers.get('etag')).toBe(`"l${before.version}"`);
    const reader = response.body!.getReader();
    const parts: Uint8Array[] = [];
    const first = await reader.read();
    parts.push(first.value!);
    // The stream holds a snapshot open while this reader waits.
    expect(await openSnapshots()).toBe(1);

    await patchTask(fx.key, last.id, { name: 'Renamed while the list was read' });
    const added = await createTask(fx.key, { projectId: project.id, listId: project.defaultListId, name: 'Added while the list was read' });

    for (let part = await reader.read(); !part.done; part = await reader.read()) parts.push(part.value);
    const body = Buffer.concat(parts).toString();
    expect(body === before.json).toBe(true);

    const after = await fetch(listUrl(project.id), { headers: headers() });
    expect(after.headers.get('etag')).not.toBe(`"l${before.version}"`);
    const now = (await after.json()) as ListedTask[];
    expect(now.find((task) => task.id === last.id)?.name).toBe('Renamed while the list was read');
    expect(now.some((task) => task.id === added.id)).toBe(true);
  });

  /** StreamTasks calls the tasks service ended with `code`, read from its /metrics. */
  const streamsEnded = async (code: string): Promise<number> => {
    let total = 0;
    for (const tasks of inject('stack').services.filter((service) => service.name === 'tasks')) {
      for (const line of (await (await fetch(`${tasks.opsUrl}/metrics`)).text()).split('\n')) {
        if (line.startsWith('grpc_server_handled_total{') && line.includes('grpc_method="StreamTasks"') && line.includes(`grpc_code="${code}"`)) {
          total += Number(line.split(' ').pop());
        }
      }
    }
    return total;
  };

  it('a client that goes away mid-read ends the snapshot transaction and frees its connection', async () => {
    const project = await largeProject(4_000, 2, 12_000);
    const cancelledBefore = await streamsEnded('CANCELLED');
    const abort = new AbortController();
    const response = await fetch(listUrl(project.id), { headers: headers(), signal: abort.signal });
    const reader = response.body!.getReader();
    await reader.read();
    expect(await openSnapshots()).toBe(1);
    abort.abort();
    await reader.read().catch(() => undefined);
    expect(await pollUntil(openSnapshots, (open) => open === 0, { timeoutMs: 10_000 })).toBe(0);
    // Ended as cancelled, not by walking the rest of the list to nobody.
    expect(await pollUntil(() => streamsEnded('CANCELLED'), (count) => count > cancelledBefore, { timeoutMs: 5_000 })).toBe(cancelledBefore + 1);

    // The service still answers lists (its connections were returned, not leaked).
    const whole = await fetch(listUrl(project.id), { headers: headers() });
    expect(whole.status).toBe(200);
    expect((JSON.parse(await whole.text()) as unknown[]).length).toBe(4_001);
  });

  it('ten concurrent readers each get the whole list', async () => {
    const project = await largeProject(5_000, 0, 0);
    const expected = await renderedList(db, project.id);
    const bodies = await Promise.all(Array.from({ length: 10 }, async () => (await fetch(listUrl(project.id), { headers: headers() })).text()));
    for (const body of bodies) expect(body === expected.json).toBe(true);
    expect(await pollUntil(openSnapshots, (open) => open === 0, { timeoutMs: 10_000 })).toBe(0);
  });

  /** The gateways' `task_list_stream_reads_total` of `kind` (opened, joined, detached). */
  const streamReads = async (kind: string): Promise<number> => {
    let total = 0;
    for (const gateway of inject('stack').services.filter((service) => service.name === 'gateway')) {
      for (const line of (await (await fetch(`${gateway.opsUrl}/metrics`)).text()).split('\n')) {
        if (line.startsWith('task_list_stream_reads_total{') && line.includes(`kind="${kind}"`)) total += Number(line.split(' ').pop());
      }
    }
    return total;
  };

  it('reads of one list that come together share one snapshot, each checked current, and each gets the whole list', async () => {
    const project = await largeProject(5_000, 0, 0);
    const expected = await renderedList(db, project.id);
    // The first read learns that the list is streamed; reads after it go straight to StreamTasks.
    expect(await (await fetch(listUrl(project.id), { headers: headers() })).text()).toBe(expected.json);
    // Reads sent together join the first one's call, unless the machine spreads them out: a few tries.
    let joined = 0;
    for (let attempt = 0; attempt < 5 && joined === 0; attempt++) {
      const before = { joined: await streamReads('joined'), ok: await streamsEnded('OK') };
      const responses = await Promise.all(Array.from({ length: 6 }, () => fetch(listUrl(project.id), { headers: headers() })));
      for (const response of responses) expect(response.headers.get('etag')).toBe(`"l${expected.version}"`);
      const bodies = await Promise.all(responses.map((response) => response.text()));
      for (const body of bodies) expect(body === expected.json).toBe(true);
      joined = (await streamReads('joined')) - before.joined;
      // Every read that joined is one StreamTasks call fewer.
      expect((await streamsEnded('OK')) - before.ok).toBe(6 - joined);
    }
    expect(joined).toBeGreaterThan(0);
    expect(await pollUntil(openSnapshots, (open) => open === 0, { timeoutMs: 10_000 })).toBe(0);
  });

  /** Reads of `project` sent together until one pair shares a call: the pair's responses, the other reads drained. */
  const sharedPair = async (project: CreatedProject): Promise<[Response, PausedResponse]> => {
    await (await fetch(listUrl(project.id), { headers: headers() })).arrayBuffer();
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = await streamReads('joined');
      const pair = await Promise.all([fetch(listUrl(project.id), { headers: headers() }), pausedGet(listUrl(project.id), headers())]);
      if ((await streamReads('joined')) > before) return pair;
      await Promise.all([pair[0].arrayBuffer(), pair[1].text()]);
    }
    throw new Error('no two reads of the list shared a call in 5 tries');
  };

  it('a read whose client stops reading delays the others a moment at most, then finishes on a call of its own', async () => {
    // ~25 MB: several times what the socket buffers between the gateway and a client that stopped
    // reading hold (that client's receive window stays small: test/support/paused-response.ts).
    const project = await largeProject(4_000, 2, 12_000);
    const expected = await renderedList(db, project.id);
    const detachedBefore = await streamReads('detached');
    const [reading, stopped] = await sharedPair(project);
    // One client reads the whole list while the other reads nothing.
    expect((await reading.text()) === expected.json).toBe(true);
    expect(await streamReads('detached')).toBe(detachedBefore + 1);
    // The one that stopped reads on: the same bytes, from its own call of the same snapshot version.
    expect((await stopped.text()) === expected.json).toBe(true);
    expect(await pollUntil(openSnapshots, (open) => open === 0, { timeoutMs: 10_000 })).toBe(0);
  });

  it('a detached read never mixes versions: when the list changed meanwhile it is cut, not completed', async () => {
    const project = await largeProject(4_000, 2, 12_000);
    const expected = await renderedList(db, project.id);
    const last = (JSON.parse(expected.json) as ListedTask[]).at(-1)!;
    const detachedBefore = await streamReads('detached');
    const [reading, stopped] = await sharedPair(project);
    // A write lands while both are behind: the shared snapshot is from before it.
    await patchTask(fx.key, last.id, { name: 'Renamed while a reader had stopped' });
    // One client reads on; the other reads nothing, falls behind and is detached onto a call of its
    // own, which (opened after the write) answers another version: that response is cut. On a
    // loaded machine the detach may come before the write, or take the reader that read on; either
    // way every response is the shared snapshot's bytes, whole, or cut.
    // Each body as what a failure should show: whole (the shared snapshot's bytes), cut (why), or other bytes.
    const outcome = (response: Response | PausedResponse): Promise<string> =>
      response.text().then(
        (body) => (body === expected.json ? 'whole' : `other bytes (${body.length} of ${expected.json.length})`),
        (error: unknown) => `cut: ${String((error as Error).cause ?? error)}`,
      );
    const outcomes = [await outcome(reading)];
    expect(await streamReads('detached'), `detached reads (the reading client's body: ${outcomes[0]})`).toBe(detachedBefore + 1);
    outcomes.push(await outcome(stopped));
    expect(outcomes.filter((body) => body !== 'whole' && !body.startsWith('cut: ')), outcomes.join('; ')).toEqual([]);
    expect(outcomes.filter((body) => body.startsWith('cut: ')).length, outcomes.join('; ')).toBeLessThanOrEqual(1);
    expect(await pollUntil(openSnapshots, (open) => open === 0, { timeoutMs: 10_000 })).toBe(0);
  });

  it('each section is one index walk read through a cursor, never a sort, also on statistics from before the section grew', async () => {
    // Statistics taken while the section was empty: the planner expects a few rows (as after a bulk import, before autovacuum).
    const project = await createProject(fx.key);
    await db.query('ANALYZE tasks');
    await seedTasks(db, { workspaceId: fx.ws.workspace.id, projectId: project.id, sectionIds: [project.defaultListId], count: 6_000, describedEvery: 0, descriptionBytes: 0, statusId: fx.todo.id });
    /** Every node of the cursor's plan, depth first. */
    const cursorPlan = async (): Promise<PlanNode[]> => {
      await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      try {
        await db.query(snapshotSettings({ statementTimeoutMs: 10_000, idleTimeoutMs: 60_000 }));
        const { rows } = await db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>({
          text: `EXPLAIN (FORMAT JSON) DECLARE c NO SCROLL CURSOR FOR ${sectionRowsSql}`,
          values: [project.defaultListId],
        });
        return planNodes(rows[0]!['QUERY PLAN'][0]!.Plan);
      } finally {
        await db.query('ROLLBACK');
      }
    };
    const expectIndexWalk = (plan: PlanNode[]): void =>
      expect(plan.map((node) => [node['Node Type'], node['Index Name']])).toEqual([['Index Scan', 'tasks_section_position_number_idx']]);
    expectIndexWalk(await cursorPlan());
    // And on statistics that know the section is most of the table (a sort of it would be cheaper in total).
    await db.query('ANALYZE tasks');
    expectIndexWalk(await cursorPlan());
  });
});
