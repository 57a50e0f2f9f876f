import { randomUUID } from 'node:crypto';
import { createPool, type Pool, type PoolClient } from '@tws/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DeliveryStore, type IncomingEvent } from './deliveries.js';
import type { DeliveryWork } from './delivery-work.js';
import { backlogColumn, taskBacklogColumn } from './delivery-work.js';
import { fanOutStatement, fanOutValues } from './fan-out-statement.js';
import { analyzedInBothPlans, planNodes, rowsWorkedThrough, type PlanNode } from '../../../../test/support/auto-explain.js';

/** Against the test stack's Postgres (schema webhooks), in a workspace of its own. */
describe('DeliveryStore: fan-out and attempt log', () => {
  let pool: Pool;
  let store: DeliveryStore;

  beforeAll(() => {
    pool = createPool({ url: inject('stack').databaseUrl, schema: 'webhooks', applicationName: 'webhooks-fan-out-test', max: 2 });
    store = new DeliveryStore(pool);
  });
  afterAll(async () => {
    await pool.end();
  });

  it('gives every delivery of a batch the payload of its own event, in event order then endpoint order, also when fanned out again', async () => {
    const workspaceId = `fan-out-${randomUUID()}`;
    const endpoints = [randomUUID(), randomUUID(), randomUUID()];
    for (const [index, id] of endpoints.entries()) {
      await pool.query(
        `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext, created_at)
         VALUES ($1, $2, $3, '{task.updated}', '\\x00', now() + make_interval(secs => $4))`,
        [id, workspaceId, `https://e${index}.example/`, index],
      );
    }
    const events: IncomingEvent[] = Array.from({ length: 7 }, (_, index) => {
      const id = `evt_${randomUUID()}`;
      // Lengths and bytes of every kind: one empty, one of every byte value.
      const payload = index === 5 ? Buffer.alloc(0) : index === 6 ? Buffer.from(Array.from({ length: 256 }, (_, byte) => byte)) : Buffer.from(JSON.stringify({ id, n: index }));
      return { id, workspaceId, type: 'task.updated', taskId: `task-${index % 3}`, payload };
    });

    // The second call finds the deliveries the first one created (a redelivered Kafka message).
    for (const input of [events, [...events].reverse()]) {
      const { work, queued } = await store.fanOut(input);
      expect(queued).toEqual([]);
      expect(work.map((item) => [item.eventId, item.endpointId])).toEqual(
        input.flatMap((event) => endpoints.map((endpointId) => [event.id, endpointId])),
      );
      for (const item of work) {
        const event = events.find((candidate) => candidate.id === item.eventId)!;
        expect(item.payload.equals(event.payload)).toBe(true);
        expect(item).toMatchObject({ workspaceId, taskId: event.taskId, eventType: 'task.updated', state: 'pending', nextAttempt: 1 });
      }
    }
    // Every event is kept with its own payload, byte for byte (they travel as one parameter, cut by offsets).
    const stored = await pool.query<{ id: string; payload: Buffer }>('SELECT id, payload FROM events WHERE id = ANY ($1::text[])', [events.map((event) => event.id)]);
    expect(new Map(stored.rows.map((row) => [row.id, row.payload.toString('hex')]))).toEqual(new Map(events.map((event) => [event.id, event.payload.toString('hex')])));
    // An endpoint deleted since: its deliveries still come back (the pipeline cancels them), marked so.
    await pool.query('UPDATE endpoints SET deleted_at = now() WHERE id = $1', [endpoints[1]]);
    const { work: again } = await store.fanOut(events.slice(0, 2));
    expect(again.map((item) => [item.eventId, item.endpointId, item.endpointDeleted])).toEqual(
      events.slice(0, 2).flatMap((event) => endpoints.map((endpointId) => [event.id, endpointId, endpointId === endpoints[1]])),
    );
    // The delivery log is newest first in the batch's (Kafka) order, whatever the random event ids.
    for (const endpointId of endpoints) {
      const log = await store.listForEndpoint(endpointId, 20, undefined);
      expect(log.map((entry) => entry.eventId)).toEqual([...events].reverse().map((event) => event.id));
    }
  });

  it('creates a delivery parked when its task has a backlog at the endpoint (no second write to park it), holds back no other task; a redelivered message finds it as it is', async () => {
    const workspaceId = `fan-out-parked-${randomUUID()}`;
    const [slow, fast] = [randomUUID(), randomUUID()];
    await pool.query(
      `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext) SELECT id, $2, 'https://e.example/', '{task.updated}', '\\x00' FROM unnest($1::uuid[]) AS id`,
      [[slow, fast], workspaceId],
    );
    const event = (task: number): IncomingEvent => ({ id: `evt_${randomUUID()}`, workspaceId, type: 'task.updated', taskId: `task-${task}`, payload: Buffer.from(`{"task":${task}}`) });
    // The slow endpoint's delivery of task 1 is parked (its backlog), as the pipeline parks one; a lease
    // under another owner keeps the stack's own drainer away from it while the test runs.
    await pool.query(`INSERT INTO backlog_leases (endpoint_id, owner, expires_at) VALUES ($1, 'deliveries-test', now() + interval '5 minutes')`, [slow]);
    const first = await store.fanOut([event(1)]);
    expect(first.work.map((item) => [item.parked, item.parkedAtFanOut, item.backlogAhead])).toEqual([[false, false, false], [false, false, false]]);
    await pool.query('UPDATE deliveries SET parked = true WHERE id = $1', [first.work.find((item) => item.endpointId === slow)!.deliveryId]);

    // Task 1 again and task 2, in one batch: only task 1's delivery to the slow endpoint queues behind the backlog.
    const [again, other] = [event(1), event(2)];
    // Endpoint order is creation then id (random here): compared by endpoint.
    const rows = (work: DeliveryWork[]) =>
      work.map((item) => [item.eventId === again.id ? 1 : 2, item.endpointId, item.parked, item.parkedAtFanOut, item.backlogAhead]).sort((a, b) =>
        a[0] !== b[0] ? Number(a[0]) - Number(b[0]) : a[1] === slow ? -1 : b[1] === slow ? 1 : 0,
      );
    const checkedBefore = Date.now();
    const second = await store.fanOut([again, other]);
    expect(rows(second.work)).toEqual([
      [1, slow, true, true, true],
      [1, fast, false, false, false],
      [2, slow, false, false, false],
      [2, fast, false, false, false],
    ]);
    // When the answer was asked for: a park committed after that is not in it (the pipeline checks its own).
    for (const item of second.work) expect(item.checkedAt).toBeGreaterThanOrEqual(checkedBefore);
    // Written once: by the insert that wrote the other endpoint's delivery (a park by UPDATE is another transaction's version).
    const versions = await pool.query<{ endpoint_id: string; xmin: string; task_key: number }>(
      'SELECT endpoint_id, xmin::text, task_key FROM deliveries WHERE event_id = $1',
      [again.id],
    );
    expect(new Set(versions.rows.map((row) => row.xmin)).size).toBe(1);
    // Keyed by the task (hashtext, as the statement computes it).
    const [{ key }] = (await pool.query<{ key: number }>('SELECT hashtext($1) AS key', [again.taskId])).rows as [{ key: number }];
    expect(versions.rows.map((row) => row.task_key)).toEqual([key, key]);
    // A redelivered message finds the delivery as it is: parked, but not by this fan-out (its backlog read per endpoint).
    expect(rows((await store.fanOut([again])).work)).toEqual([
      [1, slow, true, false, true],
      [1, fast, false, false, false],
    ]);
    // Loaded by id (a retry, a redelivery, the drainer's batch): never a first attempt queued in order, no backlog probed.
    const loaded = await store.load(second.work.map((item) => item.deliveryId));
    expect([...loaded.values()].map((item) => [item.parked, item.backlogAhead])).toEqual(expect.arrayContaining([[true, false], [false, false]]));
    expect(loaded.size).toBe(4);
    // A parked delivery without a task key (parked before migration 019, or by an older replica) holds back every task.
    await pool.query(`UPDATE deliveries SET task_key = NULL WHERE endpoint_id = $1 AND parked`, [slow]);
    const third = event(3);
    expect(rows((await store.fanOut([third])).work).map((row) => row.slice(1))).toEqual([
      [slow, true, true, true],
      [fast, false, false, false],
    ]);
    await pool.query(`UPDATE deliveries SET parked = false, state = 'cancelled' WHERE endpoint_id = $1`, [slow]);
    await pool.query('DELETE FROM backlog_leases WHERE endpoint_id = $1', [slow]);
  });

  it('probes each (endpoint, task) backlog once per fan-out, not once per delivery', async () => {
    const workspaceId = `fan-out-probes-${randomUUID()}`;
    const endpoints = [randomUUID(), randomUUID(), randomUUID()];
    await pool.query(
      `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext) SELECT id, $2, 'https://e.example/', '{task.updated}', '\\x00' FROM unnest($1::uuid[]) AS id`,
      [endpoints, workspaceId],
    );
    const events = Array.from({ length: 8 }, (_, index) => ({ id: `evt_${randomUUID()}`, taskId: `task-${index % 4}` }));
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: BufferedPlanNode }> }>({
        text: `EXPLAIN (ANALYZE, FORMAT JSON) ${fanOutStatement}`,
        values: fanOutValues(
          events.map((event) => ({ id: event.id, workspaceId, type: 'task.updated', taskId: event.taskId, payload: Buffer.from(event.id) })),
          500,
        ),
      });
      const plan = rows[0]!['QUERY PLAN'][0]!.Plan;
      expect(plan['Actual Rows']).toBe(events.length * endpoints.length);
      // The probes' scans of deliveries (alias p: a task's backlog; pn: the parked deliveries without a task
      // key), whichever index the shared database's statistics pick. Tasks 0-3, twice each: 4 per endpoint.
      const loops = (alias: string) => {
        const probes = planNodes(plan).filter((node) => node['Relation Name'] === 'deliveries' && node.Alias === alias);
        expect(probes.length).toBeGreaterThan(0);
        return probes.reduce((sum, node) => sum + node['Actual Loops'], 0);
      };
      expect(loops('p')).toBe(4 * endpoints.length);
      expect(loops('pn')).toBe(endpoints.length);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  /** A workspace of `count` endpoints, all subscribed to task.updated, and a maker of batches of its events (one task each). */
  const linearWorkspace = async (name: string, count: number) => {
    const workspaceId = `${name}-${randomUUID()}`;
    const endpoints = Array.from({ length: count }, () => randomUUID());
    await pool.query(
      `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext) SELECT id, $2, 'https://e.example/', '{task.updated}', '\\x00' FROM unnest($1::uuid[]) AS id`,
      [endpoints, workspaceId],
    );
    const batch = (size: number): IncomingEvent[] =>
      Array.from({ length: size }, (_, index) => ({ id: `evt_${randomUUID()}`, workspaceId, type: 'task.updated', taskId: `task-${index}`, payload: Buffer.from(`{"n":${index}}`) }));
    return { endpoints, batch };
  };

  /**
   * What the fan-out of `events` worked through (rowsWorkedThrough), the most of its custom and its
   * generic plan, each of which must answer `rows` rows. `batchSize` is the statement's $6: a workspace
   * with more live endpoints than that is recorded with fan-out cursors.
   */
  const fanOutWork = async (events: IncomingEvent[], rows: number, batchSize = 500) => {
    const client = await pool.connect();
    try {
      const plans = await analyzedInBothPlans(client, { text: fanOutStatement, values: fanOutValues(events, batchSize) });
      for (const plan of plans) expect(plan['Actual Rows']).toBe(rows);
      return Math.max(...plans.map(rowsWorkedThrough));
    } finally {
      client.release();
    }
  };

  it('does work in proportion to its deliveries, not to their square: new, behind a backlog, and redelivered', async () => {
    const { endpoints, batch } = await linearWorkspace('fan-out-linear', 4);
    const work = (events: IncomingEvent[]) => fanOutWork(events, events.length * endpoints.length);
    // 300 events to 4 endpoints: 1,200 deliveries. Joined as a nested loop, the deliveries and their
    // (endpoint, task) pairs were 1,200 × 1,200 rows (a batch of 1,600 events took 8 s, 6,400 deliveries).
    const deliveries = 300 * endpoints.length;
    expect(await work(batch(300))).toBeLessThan(40 * deliveries);
    // Behind a backlog: the first 150 tasks have a parked delivery at every endpoint (a lease keeps the
    // stack's drainer away), so half of the new deliveries are created parked.
    const earlier = batch(300);
    await store.fanOut(earlier);
    await pool.query(`INSERT INTO backlog_leases (endpoint_id, owner, expires_at) SELECT id, 'deliveries-test', now() + interval '5 minutes' FROM unnest($1::uuid[]) AS id`, [endpoints]);
    await pool.query(`UPDATE deliveries SET parked = true WHERE event_id = ANY ($1::text[])`, [earlier.slice(0, 150).map((event) => event.id)]);
    const behind = batch(300);
    expect(await work(behind)).toBeLessThan(40 * deliveries);
    // (What the statement did, done for real: tasks 0-149 queue behind their backlogs at every endpoint.)
    expect((await store.fanOut(behind)).work.filter((item) => item.parked && item.parkedAtFanOut && item.backlogAhead)).toHaveLength(150 * endpoints.length);
    // Redelivered (a rebalance): every delivery is known, none created.
    expect(await work(earlier)).toBeLessThan(40 * deliveries);
    await pool.query(`UPDATE deliveries SET parked = false, state = 'cancelled' WHERE endpoint_id = ANY ($1::uuid[])`, [endpoints]);
    await pool.query('DELETE FROM backlog_leases WHERE endpoint_id = ANY ($1::uuid[])', [endpoints]);
  });

  it('records the events of a workspace that fans out in batches in proportion to them, not to their square', async () => {
    // 4 endpoints over a batch size of 2: each event is recorded with 16 cursors and answered by one
    // marker row. Joined as a nested loop, the recorded events and the batch were 300 × 300 rows
    // (395,132 worked through with hash and merge joins off, against 36,321).
    const { batch } = await linearWorkspace('fan-out-batched-linear', 4);
    expect(await fanOutWork(batch(300), 300, 2)).toBeLessThan(200 * 300);
  });

  /**
   * Runs `check` on a connection whose temporary copies of the two tables (a session's temporary tables
   * come first in its search path) hold what the shared test database cannot promise, with statistics:
   * 40,000 deliveries of 4 endpoints and 200 tasks, the newest half parked. A temporary table gets no
   * vacuum, so the entries a drained backlog leaves dead stay. `indexOf` names the copy of an index by
   * the end of its definition (LIKE … INCLUDING ALL names the copies itself).
   */
  const withScratchBacklog = async (check: (client: PoolClient, indexOf: (definitionEnd: string) => Promise<string>) => Promise<void>) => {
    const client = await pool.connect();
    try {
      await client.query('CREATE TEMP TABLE endpoints (LIKE webhooks.endpoints INCLUDING ALL)');
      await client.query('CREATE TEMP TABLE deliveries (LIKE webhooks.deliveries INCLUDING ALL)');
      const endpointIds = Array.from({ length: 4 }, () => randomUUID());
      await client.query(
        `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext) SELECT id, 'backlog-plan', 'https://e.example/', '{task.updated}', '\\x00' FROM unnest($1::uuid[]) AS id`,
        [endpointIds],
      );
      await client.query(
        `INSERT INTO deliveries (id, endpoint_id, event_id, created_at, updated_at, parked, task_key)
         SELECT gen_random_uuid(), ($1::uuid[])[1 + g % 4], 'evt_' || g, now() + g * interval '1 ms', now(), g > 20000, hashtext('task-' || (g / 4) % 200)
         FROM generate_series(1, 40000) g`,
        [endpointIds],
      );
      await client.query('ANALYZE endpoints');
      await client.query('ANALYZE deliveries');
      const indexOf = async (definitionEnd: string) => {
        const { rows } = await client.query<{ indexname: string }>(
          `SELECT indexname FROM pg_indexes WHERE schemaname = (SELECT nspname FROM pg_namespace WHERE oid = pg_my_temp_schema())
             AND tablename = 'deliveries' AND indexdef LIKE '%' || $1`,
          [definitionEnd],
        );
        expect(rows).toHaveLength(1);
        return rows[0]!.indexname;
      };
      await check(client, indexOf);
    } finally {
      await client.query('DROP TABLE IF EXISTS pg_temp.deliveries, pg_temp.endpoints');
      client.release();
    }
  };

  /** EXPLAIN ANALYZE of `select`: its scans of deliveries (type, index), the pages it read, and its rows. */
  const explained = async (client: PoolClient, select: string) => {
    const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: BufferedPlanNode }> }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${select}`);
    const nodes = planNodes(rows[0]!['QUERY PLAN'][0]!.Plan);
    return {
      scans: nodes.filter((node) => node['Relation Name'] === 'deliveries').map((node) => [node['Node Type'], node['Index Name']]),
      pages: nodes[0]!['Local Hit Blocks'] + nodes[0]!['Local Read Blocks'],
      rows: nodes[0]!['Actual Rows'],
    };
  };

  it('probes an endpoint\'s backlog through the parked index, also when most of its deliveries are parked (the newest)', async () => {
    await withScratchBacklog(async (client, indexOf) => {
      // 500 probes (a statement makes one per endpoint: backlogsCte).
      const probes = await explained(client, `SELECT ${backlogColumn} FROM generate_series(1, 125) JOIN endpoints e ON true`);
      expect(probes.scans).toEqual([['Index Only Scan', await indexOf('(endpoint_id, created_at, id) WHERE parked')]]);
      // A probe reads a few pages of the index, not the table (a sequential scan read ~400 pages a probe).
      expect(probes.pages).toBeLessThan(5 * 500);
    });
  });

  it('probes a task\'s backlog through the parked task index, in a page or two, also after a drained backlog left its entries dead', async () => {
    await withScratchBacklog(async (client, indexOf) => {
      const taskIndex = await indexOf('(endpoint_id, task_key) WHERE parked');
      // 800 probes: each endpoint and task, as fan-outs ask.
      const probe = () => explained(client, `SELECT ${taskBacklogColumn('e.id', "hashtext('task-' || t)")} FROM generate_series(0, 199) t JOIN endpoints e ON true`);
      const parked = await probe();
      expect(parked.scans).toEqual([[expect.stringMatching(/^Index (Only )?Scan$/), taskIndex]]);
      expect(parked.pages).toBeLessThan(4 * 800);
      // The backlog drained (as after a slow spell under load), its entries dead until vacuum. The first
      // walk marks them dead; from then on a probe of a task's key reads its page or two (1,601 pages for
      // 800), where the endpoint's probe (deliveries_parked_idx, in backlog order) walks every dead entry
      // of the endpoint's backlog (48,949 pages for 800).
      await client.query('UPDATE deliveries SET parked = false WHERE parked');
      await probe();
      const drained = await probe();
      expect(drained.scans).toEqual([[expect.stringMatching(/^Index (Only )?Scan$/), taskIndex]]);
      expect(drained.rows).toBe(800);
      const byEndpoint = await explained(client, `SELECT ${backlogColumn} FROM generate_series(0, 199) t JOIN endpoints e ON true`);
      expect(drained.pages).toBeLessThan(3 * 800);
      expect(drained.pages * 10).toBeLessThan(byEndpoint.pages);
    });
  });

  it('moves a whole fan-out on with updates that keep every delivery on its page (HOT: no index gets an entry)', async () => {
    const workspaceId = `attempt-log-${randomUUID()}`;
    await pool.query(
      `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext)
       SELECT gen_random_uuid(), $1, 'https://e' || n || '.example/', '{task.updated}', '\\x00' FROM generate_series(1, 4) AS n`,
      [workspaceId],
    );
    // 240 deliveries created side by side (several pages), then logged as the pipeline logs them (batches of up to 200).
    const events: IncomingEvent[] = Array.from({ length: 60 }, (_, n) => ({
      id: `evt_${randomUUID()}`, workspaceId, type: 'task.updated', taskId: `task-${n}`, payload: Buffer.from(`{"n":${n}}`),
    }));
    const { work } = await store.fanOut(events);
    expect(work).toHaveLength(240);
    const ids = work.map((delivery) => delivery.deliveryId);
    const before = await pagesOf(pool, ids);
    expect(new Set(before.values()).size).toBeGreaterThan(2);
    const next = { state: 'succeeded' as const, nextAttempt: 1, nextAttemptAt: null, handoffPending: false };
    for (const batch of [work.slice(0, 120), work.slice(120)]) {
      const advanced = await store.completeAttempts(
        batch.map((delivery) => ({ deliveryId: delivery.deliveryId, attempt: 1, startedAt: new Date(), durationMs: 3, outcome: 'succeeded' as const, statusCode: 200, error: null, next })),
      );
      expect(advanced.every(Boolean)).toBe(true);
    }
    // At fillfactor 80 (before migration 015) a page had no room for many of its rows' new versions: this failed.
    expect(await pagesOf(pool, ids)).toEqual(before);
    const { rows } = await pool.query<{ state: string; n: number }>('SELECT state, count(*)::int AS n FROM deliveries WHERE id = ANY ($1::uuid[]) GROUP BY state', [ids]);
    expect(rows).toEqual([{ state: 'succeeded', n: 240 }]);
  });
});

/** The plan fields of the probe's EXPLAIN (ANALYZE, BUFFERS) that this test reads. */
interface BufferedPlanNode extends PlanNode {
  Alias?: string;
  'Local Hit Blocks': number;
  'Local Read Blocks': number;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: BufferedPlanNode[];
}

/** The heap page of each delivery's live version (a HOT update keeps it on its page). */
async function pagesOf(pool: Pool, ids: string[]): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ id: string; page: number }>(
    'SELECT id, (ctid::text::point)[0]::int AS page FROM deliveries WHERE id = ANY ($1::uuid[])',
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row.page]));
}

