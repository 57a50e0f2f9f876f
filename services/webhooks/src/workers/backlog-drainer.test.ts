import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createLogger, createPool, runMigrations, type Pool } from '@tws/common';
import { waitUntil } from '@tws/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { DeliveryPipeline } from '../domain/delivery/pipeline.js';
import { BacklogStore, backlogShards } from '../store/backlog.js';
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
  const schema = `webhooks_drainer_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  let pool: Pool;
  let store: DeliveryStore;
  let backlog: BacklogStore;
  const logger = createLogger('backlog-drainer-test', 'silent');

  beforeAll(async () => {
    const { databaseUrl } = inject('stack');
    await runMigrations({ url: databaseUrl, schema, directory: fileURLToPath(new URL('../../migrations', import.meta.url)), logger });
    pool = createPool({ url: databaseUrl, schema, applicationName: 'backlog-drainer-test', max: 4 });
    store = new DeliveryStore(pool);
    backlog = new BacklogStore(pool);
  });
  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool?.end();
  });

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
