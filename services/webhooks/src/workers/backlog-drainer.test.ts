import { randomUUID } from 'node:crypto';
import { createLogger, type Pool } from '@tws/common';
import { waitUntil } from '@tws/devstack';
import { afterAll, beforeAll, describe, expect, inject, it, type TestContext } from 'vitest';
import { planNodes, underAutoExplain, type PlanNode } from '../../../../test/support/auto-explain.js';
import { scratchSchema, type ScratchSchema } from '../../../../test/support/scratch-schema.js';
import type { DeliveryPipeline } from '../domain/delivery/pipeline.js';
import { BacklogStore, backlogShards, shardOf, type BacklogPlace } from '../store/backlog.js';
import { DeliveryStore, type DeliveryWork, type IncomingEvent } from '../store/deliveries.js';
import { BacklogDrainer } from './backlog-drainer.js';

interface Attempted {
  drainer: string;
  taskId: string;
  eventId: string;
}

/**
 * A pipeline that "attempts" a drained delivery by logging it as its attempt would (succeeded, no
 * longer parked) and records who attempted what, in which order.
 */
function recordingPipeline(pool: Pool, drainer: string, attempted: Attempted[]): DeliveryPipeline {
  const fake = {
    inFlight: 0,
    freeSlots: () => 50,
    forgetParked: () => undefined,
    async process(work: DeliveryWork): Promise<void> {
      attempted.push({ drainer, taskId: work.taskId, eventId: work.eventId });
      await pool.query(`UPDATE deliveries SET parked = false, state = 'succeeded', next_attempt = 2 WHERE id = $1`, [work.deliveryId]);
    },
  };
  return fake as unknown as DeliveryPipeline;
}

/**
 * Against the test stack's Postgres, in a schema of its own made by the service's migrations: the
 * stack's webhooks service drains the backlogs of its own schema and must not take these.
 */
describe('BacklogDrainer: a backlog drained in shards', () => {
  let scratch: ScratchSchema | undefined;
  let pool: Pool;
  let store: DeliveryStore;
  let backlog: BacklogStore;
  const logger = createLogger('backlog-drainer-test', 'silent');

  beforeAll(async () => {
    const { databaseUrl } = inject('stack');
    scratch = await scratchSchema({
      databaseUrl,
      prefix: 'webhooks_drainer',
      migrations: new URL('../../migrations', import.meta.url),
      applicationName: 'backlog-drainer-test',
      max: 4,
    });
    pool = scratch.pool;
    store = new DeliveryStore(pool);
    backlog = new BacklogStore(pool);
  });
  afterAll(() => scratch?.drop());

  /** An endpoint with `rounds` parked deliveries of each of `tasks` tasks, oldest first round by round. */
  async function endpointWithBacklog(tasks: number, rounds: number): Promise<string> {
    const workspaceId = `backlog-${randomUUID()}`;
    const endpointId = randomUUID();
    await pool.query(
      `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext) VALUES ($1, $2, 'https://e.example/', '{task.updated}', '\\x00')`,
      [endpointId, workspaceId],
    );
    const events: IncomingEvent[] = [];
    for (let round = 0; round < rounds; round += 1) {
      for (let task = 0; task < tasks; task += 1) {
        const id = `evt_${randomUUID()}`;
        events.push({ id, workspaceId, type: 'task.updated', taskId: `task-${task}`, payload: Buffer.from(`{"round":${round}}`) });
      }
    }
    await store.fanOut(events);
    await pool.query('UPDATE deliveries SET parked = true WHERE endpoint_id = $1', [endpointId]);
    return endpointId;
  }

  /** `count` more (unparked) deliveries of the endpoint, of new events of one task; their ids. */
  async function endpointWithBacklogRows(endpointId: string, count: number): Promise<string[]> {
    const { rows } = await pool.query<{ workspace_id: string }>('SELECT workspace_id FROM endpoints WHERE id = $1', [endpointId]);
    const workspaceId = rows[0]!.workspace_id;
    const events = Array.from({ length: count }, () => ({ id: `evt_${randomUUID()}`, workspaceId, type: 'task.updated', taskId: 'task-late', payload: Buffer.from('{}') }));
    const { work } = await store.fanOut(events);
    return work.map((item) => item.deliveryId);
  }

  const backlogShardsList = (): number[] => Array.from({ length: backlogShards }, (_, shard) => shard);

  const parkedOf = async (endpointId: string): Promise<number> =>
    Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM deliveries WHERE endpoint_id = $1 AND parked', [endpointId])).rows[0]!.n);

  /** The events of the endpoint's deliveries in backlog order (created_at, id). */
  const backlogOrder = async (endpointId: string): Promise<string[]> =>
    (await pool.query<{ event_id: string }>('SELECT event_id FROM deliveries WHERE endpoint_id = $1 ORDER BY created_at, id', [endpointId])).rows.map(
      (row) => row.event_id,
    );

  it('two replicas share one endpoint\'s backlog by task; each task\'s deliveries go out once, in order, from one of them', async () => {
    const endpointId = await endpointWithBacklog(24, 4);
    const order = await backlogOrder(endpointId);
    const attempted: Attempted[] = [];
    const drainers = ['a', 'b'].map(
      (name) =>
        new BacklogDrainer({ backlog, store, pipeline: recordingPipeline(pool, name, attempted), logger, maxPending: 1_000, intervalMs: 20, shareGraceMs: 60_000 }),
    );
    for (const drainer of drainers) drainer.start();
    try {
      await waitUntil('the backlog drained', async () => (await parkedOf(endpointId)) === 0, { timeoutMs: 30_000, intervalMs: 50 });
    } finally {
      await Promise.all(drainers.map((drainer) => drainer.stop(5_000)));
    }
    expect(attempted).toHaveLength(24 * 4);
    expect(new Set(attempted.map((item) => item.eventId)).size).toBe(24 * 4);
    // Both replicas drained (each took half of the shards: the other half stayed free for it).
    const byDrainer = new Map<string, Set<string>>();
    for (const item of attempted) byDrainer.set(item.drainer, (byDrainer.get(item.drainer) ?? new Set()).add(item.taskId));
    expect([...byDrainer.keys()].sort()).toEqual(['a', 'b']);
    // A task went out from one replica only, in backlog order.
    const [a, b] = [byDrainer.get('a')!, byDrainer.get('b')!];
    expect([...a].filter((task) => b.has(task))).toEqual([]);
    for (const task of new Set(attempted.map((item) => item.taskId))) {
      const sent = attempted.filter((item) => item.taskId === task).map((item) => item.eventId);
      expect(sent).toEqual(order.filter((eventId) => sent.includes(eventId)));
    }
    // Every lease given back once drained.
    const leases = await pool.query('SELECT 1 FROM backlog_shard_leases WHERE endpoint_id = $1 UNION ALL SELECT 1 FROM backlog_leases WHERE endpoint_id = $1', [endpointId]);
    expect(leases.rows).toEqual([]);
  });

  it('a replica alone drains every shard (those free past the grace too)', async () => {
    const endpointId = await endpointWithBacklog(16, 2);
    const attempted: Attempted[] = [];
    const drainer = new BacklogDrainer({ backlog, store, pipeline: recordingPipeline(pool, 'alone', attempted), logger, maxPending: 1_000, intervalMs: 20, shareGraceMs: 200 });
    drainer.start();
    try {
      await waitUntil('the backlog drained', async () => (await parkedOf(endpointId)) === 0, { timeoutMs: 30_000, intervalMs: 50 });
    } finally {
      await drainer.stop(5_000);
    }
    expect(attempted).toHaveLength(16 * 2);
    expect(backlogShards).toBeGreaterThan(1);
  });

  it('pages through a backlog from a place, to the microsecond (one fan-out\'s deliveries are a microsecond apart)', async () => {
    const endpointId = await endpointWithBacklog(3, 4);
    const all = backlogShardsList();
    const whole = await backlog.oldest(endpointId, all, [], 100);
    expect(whole.map((row) => row.id)).toHaveLength(12);
    const paged: string[] = [];
    let after: BacklogPlace | undefined;
    for (;;) {
      const page = await backlog.oldest(endpointId, all, [], 5, after);
      paged.push(...page.map((row) => row.id));
      if (page.length < 5) break;
      after = page.at(-1)!.place;
    }
    expect(paged).toEqual(whole.map((row) => row.id));
    // The places differ below the millisecond: a Date would have lost what orders them.
    expect(new Set(whole.map((row) => row.place.createdAt.slice(0, 23))).size).toBeLessThan(12);
    await pool.query('UPDATE deliveries SET parked = false WHERE endpoint_id = $1', [endpointId]);
  });

  it('walks on from where its last batch ended, and from the oldest row again at the end (a delivery parked behind the walk is drained too)', async () => {
    const endpointId = await endpointWithBacklog(4, 5);
    const calls: Array<{ after: BacklogPlace | undefined; ids: string[] }> = [];
    const spied = Object.create(backlog) as BacklogStore;
    spied.oldest = async (...args: Parameters<BacklogStore['oldest']>) => {
      const rows = await backlog.oldest(...args);
      // Only this endpoint's walk (a backlog other tests left would be drained too).
      if (args[0] === endpointId) calls.push({ after: args[4], ids: rows.map((row) => row.id) });
      return rows;
    };
    // Attempts that end only when let go: every batch stays in flight while the walk goes on.
    const attempted: Attempted[] = [];
    let letGo: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (letGo = resolve));
    const pipeline = recordingPipeline(pool, 'walker', attempted);
    const slow = { ...pipeline, inFlight: 0, freeSlots: () => 5, forgetParked: () => undefined, process: async (work: DeliveryWork) => {
      await released;
      await pipeline.process(work, 1);
    } } as unknown as DeliveryPipeline;
    const drainer = new BacklogDrainer({ backlog: spied, store, pipeline: slow, logger, maxPending: 1_000, intervalMs: 20, shareGraceMs: 0, rewalkMs: 400 });
    drainer.start();
    try {
      await waitUntil('four batches handed out', async () => calls.filter((call) => call.ids.length === 5).length >= 4, { timeoutMs: 10_000, intervalMs: 10 });
      // A delivery parked behind the walk: older than all of it.
      const [straggler] = await endpointWithBacklogRows(endpointId, 1);
      await pool.query(`UPDATE deliveries SET parked = true, created_at = now() - interval '1 hour' WHERE id = $1`, [straggler]);
      letGo();
      await waitUntil('the backlog drained', async () => (await parkedOf(endpointId)) === 0, { timeoutMs: 30_000, intervalMs: 50 });
    } finally {
      letGo();
      await drainer.stop(5_000);
    }
    // Each batch after the first began where the one before ended; nothing was handed out twice.
    const batches = calls.filter((call) => call.ids.length > 0);
    for (const [index, call] of batches.slice(0, 4).entries()) {
      expect(call.after?.id).toBe(index === 0 ? undefined : batches[index - 1]!.ids.at(-1));
    }
    const handed = batches.flatMap((call) => call.ids);
    expect(new Set(handed).size).toBe(handed.length);
    expect(attempted).toHaveLength(4 * 5 + 1);
  });

  /** A backlog no drainer of the test empties: unparked once the test ends, pass or fail (the tests after it drain every endpoint's backlog). */
  const unparkWhenFinished = (context: TestContext, endpointId: string): void => {
    context.onTestFinished(async () => {
      await pool.query('UPDATE deliveries SET parked = false WHERE endpoint_id = $1', [endpointId]);
    });
  };

  /** Each of the endpoint's deliveries' shard, computed from its event's task in SQL (as store/backlog.ts defines it). */
  const shardsFromTasks = async (endpointId: string): Promise<Map<string, number>> =>
    new Map(
      (
        await pool.query<{ id: string; shard: number }>(
          `SELECT d.id, ${shardOf('ev.task_id')} AS shard FROM deliveries d JOIN events ev ON ev.id = d.event_id WHERE d.endpoint_id = $1`,
          [endpointId],
        )
      ).rows.map((row) => [row.id, row.shard]),
    );

  it('keeps each delivery\'s shard on its row from its creation; a row without one (older than migration 014) takes its event\'s task\'s', async (context) => {
    const endpointId = await endpointWithBacklog(16, 2);
    unparkWhenFinished(context, endpointId);
    const expected = await shardsFromTasks(endpointId);
    const { rows } = await pool.query<{ id: string; backlog_shard: number | null }>('SELECT id, backlog_shard FROM deliveries WHERE endpoint_id = $1', [endpointId]);
    expect(rows).toHaveLength(32);
    expect(new Map(rows.map((row) => [row.id, row.backlog_shard]))).toEqual(expected);
    expect(new Set(expected.values()).size).toBeGreaterThan(2);
    const picked = async (shards: number[]): Promise<Map<string, number>> =>
      new Map((await backlog.oldest(endpointId, shards, [], 100)).map((row) => [row.id, row.shard]));
    expect(await picked(backlogShardsList())).toEqual(expected);
    // Half of the rows as an older replica wrote them: the same shards, the same picks per shard.
    await pool.query('UPDATE deliveries SET backlog_shard = NULL WHERE endpoint_id = $1 AND id = ANY ($2::uuid[])', [endpointId, rows.filter((_, index) => index % 2 === 0).map((row) => row.id)]);
    expect(await picked(backlogShardsList())).toEqual(expected);
    const [first] = [...expected.values()];
    expect(await picked([first!])).toEqual(new Map([...expected].filter(([, shard]) => shard === first)));
  });

  it('picks a batch without reading the events, and loads it by id without walking the endpoint\'s delivery log (auto_explain)', async (context) => {
    const endpointId = await endpointWithBacklog(8, 6);
    unparkWhenFinished(context, endpointId);
    // A delivery log beside the backlog: deliveries of the endpoint that are not parked (the fan-out parks them behind it).
    const logged = await endpointWithBacklogRows(endpointId, 60);
    await pool.query('UPDATE deliveries SET parked = false WHERE id = ANY ($1::uuid[])', [logged]);
    const { result, plans } = await underAutoExplain(
      inject('stack').databaseUrl,
      scratch!.schema,
      async (session) => {
        const picked = await new BacklogStore(session as unknown as Pool).oldest(endpointId, [0, 1, 2, 3], [], 10);
        const work = await new DeliveryStore(session as unknown as Pool).load(picked.map((row) => row.id));
        return { picked, work };
      },
      { analyze: true },
    );
    expect(result.picked).toHaveLength(10);
    expect(result.picked.every((row) => row.shard >= 0 && row.shard <= 3)).toBe(true);
    expect([...result.work.keys()].sort()).toEqual(result.picked.map((row) => row.id).sort());
    const planOf = (part: string): PlanNode[] => {
      const found = plans.find(({ query }) => query.includes(part));
      expect(found, `a plan of "…${part}…" among ${plans.length}`).toBeDefined();
      return planNodes((JSON.parse(found!.plan) as { Plan: PlanNode }).Plan);
    };
    const picking = planOf('SELECT d.id, s.shard');
    // The parked rows' shards from their rows: the events table is in the plan (rows older than 014) but never read.
    expect(picking.filter((node) => node['Relation Name'] === 'events' && (node['Actual Loops'] ?? 0) > 0)).toEqual([]);
    expect(picking.some((node) => node['Index Name'] === 'deliveries_parked_idx')).toBe(true);
    // The load reads the deliveries by id only: no backlog is probed for work loaded by id.
    const loading = planOf('false AS backlog_ahead');
    const deliveryIndexes = new Set(loading.flatMap((node) => (node['Index Name']?.startsWith('deliveries') ? [node['Index Name']] : [])));
    expect(deliveryIndexes).toEqual(new Set(['deliveries_pkey']));
    expect(loading.filter((node) => node['Node Type'] === 'Seq Scan')).toEqual([]);
  });

  it('leaves an endpoint whose backlog an older replica holds (its own lease owner) to it', async () => {
    const endpointId = await endpointWithBacklog(4, 1);
    await pool.query(`INSERT INTO backlog_leases (endpoint_id, owner, expires_at) VALUES ($1, 'an-older-replica', now() + interval '1 minute')`, [endpointId]);
    const attempted: Attempted[] = [];
    const drainer = new BacklogDrainer({ backlog, store, pipeline: recordingPipeline(pool, 'new', attempted), logger, maxPending: 1_000, intervalMs: 20, shareGraceMs: 0 });
    drainer.start();
    try {
      // Ticks run meanwhile; none takes the endpoint.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(attempted).toEqual([]);
      expect(await parkedOf(endpointId)).toBe(4);
      // Once the older replica lets go, it is drained.
      await pool.query('DELETE FROM backlog_leases WHERE endpoint_id = $1', [endpointId]);
      await waitUntil('the backlog drained', async () => (await parkedOf(endpointId)) === 0, { timeoutMs: 30_000, intervalMs: 50 });
    } finally {
      await drainer.stop(5_000);
    }
    expect(attempted).toHaveLength(4);
  });
});
