import { randomUUID } from 'node:crypto';
import type { Pool } from '@tws/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scratchSchema, type ScratchSchema } from '../../../../test/support/scratch-schema.js';
import { DeliveryStore, type IncomingEvent } from './deliveries.js';
import { fanOutShards, FanOutStore } from './fanouts.js';

/**
 * Against the test stack's Postgres, in a schema of its own made by the service's migrations (the
 * stack's webhooks service expands the fan-outs of its own schema: in `webhooks` it took and finished
 * an empty shard of these cursors while a test was still reading them); batches of 10.
 */
describe('batched fan-out (FanOutStore)', () => {
  let scratch: ScratchSchema | undefined;
  let pool: Pool;
  let deliveries: DeliveryStore;
  let fanOuts: FanOutStore;

  beforeAll(async () => {
    const { databaseUrl } = inject('stack');
    scratch = await scratchSchema({
      databaseUrl,
      prefix: 'webhooks_fanouts',
      migrations: new URL('../../migrations', import.meta.url),
      applicationName: 'webhooks-fanout-test',
      max: 2,
    });
    pool = scratch.pool;
    deliveries = new DeliveryStore(pool, 10);
    fanOuts = new FanOutStore(pool);
  });
  afterAll(() => scratch?.drop());

  /** `count` endpoints, all in shard 0 (ids starting with 0). */
  async function workspaceWith(count: number): Promise<{ workspaceId: string; endpoints: string[] }> {
    const workspaceId = `fanout-${randomUUID()}`;
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext)
       SELECT overlay(gen_random_uuid()::text placing '0' from 1)::uuid, $1, 'https://e' || n || '.example/', '{task.updated}', '\\x00'
       FROM generate_series(1, $2) AS n
       RETURNING id`,
      [workspaceId, count],
    );
    return { workspaceId, endpoints: rows.map((row) => row.id).sort() };
  }

  const eventOf = (workspaceId: string): IncomingEvent => {
    const id = `evt_${randomUUID()}`;
    return { id, workspaceId, type: 'task.updated', taskId: 'task-1', payload: Buffer.from(JSON.stringify({ id })), requestId: 'req-1' };
  };

  it('records an event of a large workspace with a cursor only, and small workspaces as before, in one statement', async () => {
    const large = await workspaceWith(11);
    const small = await workspaceWith(10);
    const [big, ordinary] = [eventOf(large.workspaceId), eventOf(small.workspaceId)];
    const { work, queued } = await deliveries.fanOut([big, ordinary]);
    expect(queued).toEqual([big.id]);
    expect(work.map((item) => item.eventId)).toEqual(small.endpoints.map(() => ordinary.id));
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM deliveries WHERE event_id = $1', [big.id]);
    expect(rows[0]?.n).toBe(0);
    // The redelivered message: nothing new, nothing read back (the cursor holds the progress).
    expect(await deliveries.fanOut([big])).toEqual({ work: [], queued: [] });
    // A later event of that workspace queues behind the first, even with few endpoints left.
    await pool.query('UPDATE endpoints SET deleted_at = now() WHERE id = ANY ($1::uuid[])', [large.endpoints.slice(0, 5)]);
    const later = eventOf(large.workspaceId);
    expect((await deliveries.fanOut([later])).queued).toEqual([later.id]);
    // One cursor per shard of the endpoint ids.
    const shards = await pool.query<{ shard: number }>('SELECT shard FROM fanouts WHERE event_id = $1 ORDER BY shard', [big.id]);
    expect(shards.rows.map((row) => row.shard)).toEqual(Array.from({ length: fanOutShards }, (_, shard) => shard));
    const first = await fanOuts.next({ workspaceId: large.workspaceId, shard: 3 }, null);
    expect(first).toMatchObject({ eventId: big.id, shard: 3, afterEndpoint: null, requestId: 'req-1' });
    expect(await fanOuts.next({ workspaceId: large.workspaceId, shard: 3 }, first!.seq)).toMatchObject({ eventId: later.id });
  });

  it('creates each batch idempotently by endpoint id: a repeated batch returns the same deliveries, the walk covers every endpoint once', async () => {
    const { workspaceId, endpoints } = await workspaceWith(25);
    const event = eventOf(workspaceId);
    expect((await deliveries.fanOut([event])).queued).toEqual([event.id]);
    const fanOut = (await fanOuts.next({ workspaceId, shard: 0 }, null))!;

    const firstBatch = await fanOuts.expand(fanOut, null, 10);
    expect(firstBatch.work.map((item) => item.endpointId)).toEqual(endpoints.slice(0, 10));
    expect(firstBatch).toMatchObject({ walked: 10, lastEndpoint: endpoints[9] });
    // A crash before the cursor moved: the next owner creates the batch again and gets the same rows.
    const again = await fanOuts.expand(fanOut, null, 10);
    expect(again.work.map((item) => item.deliveryId)).toEqual(firstBatch.work.map((item) => item.deliveryId));
    expect(again.work[0]).toMatchObject({ eventId: event.id, workspaceId, taskId: 'task-1', state: 'pending', nextAttempt: 1 });
    expect(again.work[0]!.payload.equals(event.payload)).toBe(true);
    await fanOuts.advance(fanOut, firstBatch.lastEndpoint!);
    expect((await fanOuts.next({ workspaceId, shard: 0 }, null))?.afterEndpoint).toBe(endpoints[9]);
    // Another shard walks none of these endpoints.
    const shardOne = (await fanOuts.next({ workspaceId, shard: 1 }, null))!;
    expect(await fanOuts.expand(shardOne, null, 10)).toEqual({ work: [], lastEndpoint: null, walked: 0 });

    // An endpoint deleted after its delivery was created: read back (the pipeline cancels it), not lost.
    await pool.query('UPDATE endpoints SET deleted_at = now() WHERE id = $1', [endpoints[12]]);
    const second = await fanOuts.expand(fanOut, endpoints[9]!, 10);
    const third = await fanOuts.expand(fanOut, second.lastEndpoint, 10);
    expect(third.walked).toBe(5);
    await fanOuts.expand(fanOut, endpoints[9]!, 10);
    const { rows } = await pool.query<{ endpoint_id: string; n: number }>(
      'SELECT endpoint_id, count(*)::int AS n FROM deliveries WHERE event_id = $1 GROUP BY endpoint_id ORDER BY endpoint_id',
      [event.id],
    );
    // Endpoint 12 was deleted before its delivery was created: none for it; every other endpoint exactly one.
    expect(rows.map((row) => row.endpoint_id)).toEqual(endpoints.filter((_, index) => index !== 12));
    expect(rows.every((row) => row.n === 1)).toBe(true);
    const deleted = await fanOuts.expand(fanOut, endpoints[11]!, 1);
    expect(deleted.work).toEqual([]);
    expect(deleted.lastEndpoint).toBe(endpoints[12]);

    await fanOuts.finish(fanOut);
    expect(await fanOuts.next({ workspaceId, shard: 0 }, null)).toBeUndefined();
  });

  it('leases a (workspace, shard) to one owner at a time; a lapsed lease can be taken', async () => {
    const key = { workspaceId: `fanout-${randomUUID()}`, shard: 5 };
    const other = { ...key, shard: 6 };
    expect(await fanOuts.lease('a', [key], 10_000)).toEqual([key]);
    expect(await fanOuts.lease('b', [key, other], 10_000)).toEqual([other]);
    expect(await fanOuts.lease('a', [key], 10_000)).toEqual([key]);
    await fanOuts.release('a', [key]);
    expect(await fanOuts.lease('b', [key], 10)).toEqual([key]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await fanOuts.lease('a', [key], 10_000)).toEqual([key]);
    await fanOuts.release('a', [key]);
    await fanOuts.release('b', [other]);
  });
});
