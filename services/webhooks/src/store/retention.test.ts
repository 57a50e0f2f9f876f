import { randomUUID } from 'node:crypto';
import { createPool, type Pool } from '@tws/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { underAutoExplain } from '../../../../test/support/auto-explain.js';
import { RetentionStore } from './retention.js';

/** Against the test stack's Postgres (schema webhooks); only rows this test backdates are old enough. */
describe('RetentionStore', () => {
  let pool: Pool;

  beforeAll(() => {
    pool = createPool({ url: inject('stack').databaseUrl, schema: 'webhooks', applicationName: 'webhooks-retention-test', max: 2 });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('deletes finished deliveries past the retention with their attempts and orphaned events; keeps pending and recent ones', async () => {
    const endpoint = randomUUID();
    const deletedEndpoint = randomUUID();
    const workspace = `retention-${randomUUID()}`;
    await pool.query(
      `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext, deleted_at)
       VALUES ($1, $3, 'https://a.example/', '{task.created}', '\\x00', NULL),
              ($2, $3, 'https://b.example/', '{task.created}', '\\x00', now() - interval '40 days')`,
      [endpoint, deletedEndpoint, workspace],
    );
    const events = [1, 2, 3].map(() => `evt_${randomUUID()}`);
    for (const id of events) {
      await pool.query(
        `INSERT INTO events (id, workspace_id, type, task_id, payload, received_at) VALUES ($1, $2, 'task.created', 't', '\\x7b7d', now() - interval '40 days')`,
        [id, workspace],
      );
    }
    const oldDone = randomUUID();
    const oldPending = randomUUID();
    const recentDone = randomUUID();
    await pool.query(
      `INSERT INTO deliveries (id, endpoint_id, event_id, state, created_at, updated_at) VALUES
         ($1, $4, $5, 'succeeded', now() - interval '32 days', now() - interval '31 days'),
         ($2, $4, $6, 'pending', now() - interval '32 days', now() - interval '31 days'),
         ($3, $4, $7, 'failed', now() - interval '32 days', now() - interval '29 days')`,
      [oldDone, oldPending, recentDone, endpoint, events[0], events[1], events[2]],
    );
    await pool.query(
      `INSERT INTO attempts (delivery_id, attempt, started_at, duration_ms, outcome, status_code) VALUES ($1, 1, now(), 5, 'succeeded', 200)`,
      [oldDone],
    );

    const removed = await new RetentionStore(pool).sweep(30, 1);
    expect(removed.deliveries).toBeGreaterThanOrEqual(1);
    const left = await pool.query<{ id: string }>('SELECT id FROM deliveries WHERE id = ANY ($1::uuid[]) ORDER BY id', [[oldDone, oldPending, recentDone]]);
    expect(left.rows.map((row) => row.id).sort()).toEqual([oldPending, recentDone].sort());
    expect((await pool.query('SELECT 1 FROM attempts WHERE delivery_id = $1', [oldDone])).rowCount).toBe(0);
    expect((await pool.query('SELECT 1 FROM events WHERE id = $1', [events[0]])).rowCount).toBe(0);
    expect((await pool.query('SELECT 1 FROM events WHERE id = ANY ($1::text[])', [[events[1], events[2]]])).rowCount).toBe(2);
    expect((await pool.query('SELECT id FROM endpoints WHERE id = ANY ($1::uuid[])', [[endpoint, deletedEndpoint]])).rows).toEqual([
      { id: endpoint },
    ]);
  });

  it('removes an original delivery before its redeliveries without breaking them (two redeliveries stay distinct), and keeps their event', async () => {
    const endpoint = randomUUID();
    const workspace = `retention-${randomUUID()}`;
    const event = `evt_${randomUUID()}`;
    await pool.query(
      `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext) VALUES ($1, $2, 'https://a.example/', '{task.created}', '\\x00')`,
      [endpoint, workspace],
    );
    // Old enough to go, but for the redeliveries that still refer to it.
    await pool.query(
      `INSERT INTO events (id, workspace_id, type, task_id, payload, received_at) VALUES ($1, $2, 'task.created', 't', '\\x7b7d', now() - interval '40 days')`,
      [event, workspace],
    );
    const original = randomUUID();
    const [first, second] = [randomUUID(), randomUUID()];
    await pool.query(
      `INSERT INTO deliveries (id, endpoint_id, event_id, state, created_at, updated_at) VALUES ($1, $2, $3, 'failed', now() - interval '32 days', now() - interval '31 days')`,
      [original, endpoint, event],
    );
    await pool.query(
      `INSERT INTO deliveries (id, endpoint_id, event_id, redelivery_of, is_redelivery, state) VALUES ($1, $3, $4, $5, true, 'succeeded'), ($2, $3, $4, $5, true, 'succeeded')`,
      [first, second, endpoint, event, original],
    );

    const store = new RetentionStore(pool);
    await store.sweep(30);
    const left = await pool.query<{ id: string; redelivery_of: string | null; is_redelivery: boolean }>(
      'SELECT id, redelivery_of, is_redelivery FROM deliveries WHERE event_id = $1 ORDER BY id',
      [event],
    );
    expect(left.rows).toEqual(
      [first, second].sort().map((id) => ({ id, redelivery_of: null, is_redelivery: true })),
    );
    // The next sweep runs cleanly too (it used to fail on the unique index for ever).
    await expect(store.sweep(30)).resolves.toBeDefined();
    // Only redeliveries refer to the event now (deliveries_redelivered_event_idx, migration 016): it stays.
    expect((await pool.query('SELECT 1 FROM events WHERE id = $1', [event])).rowCount).toBe(1);
  });

  it('finds every row through an index, foreign-key actions included (auto_explain with sequential scans priced out)', async () => {
    // Something for each statement and each foreign-key action to do: a deleted endpoint, its old
    // event (with a fan-out cursor), a finished delivery with an attempt and a redelivery of it.
    const endpoint = randomUUID();
    const workspace = `retention-${randomUUID()}`;
    const event = `evt_${randomUUID()}`;
    const [original, redelivery] = [randomUUID(), randomUUID()];
    await pool.query(
      `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext, deleted_at) VALUES ($1, $2, 'https://a.example/', '{task.created}', '\\x00', now() - interval '40 days')`,
      [endpoint, workspace],
    );
    await pool.query(
      `INSERT INTO events (id, workspace_id, type, task_id, payload, received_at) VALUES ($1, $2, 'task.created', 't', '\\x7b7d', now() - interval '40 days')`,
      [event, workspace],
    );
    await pool.query(`INSERT INTO fanouts (event_id, shard, workspace_id) VALUES ($1, 0, $2)`, [event, workspace]);
    await pool.query(
      `INSERT INTO deliveries (id, endpoint_id, event_id, redelivery_of, is_redelivery, state, created_at, updated_at)
       VALUES ($1, $3, $4, NULL, false, 'failed', now() - interval '33 days', now() - interval '32 days'),
              ($2, $3, $4, $1, true, 'succeeded', now() - interval '32 days', now() - interval '31 days')`,
      [original, redelivery, endpoint, event],
    );
    await pool.query(`INSERT INTO attempts (delivery_id, attempt, started_at, duration_ms, outcome, status_code) VALUES ($1, 1, now(), 5, 'failed', 500)`, [original]);

    // auto_explain in a session of its own (Postgres plans the foreign-key actions there, with
    // sequential scans priced out), rolled back.
    const { result: removed, plans, seqScans } = await underAutoExplain(inject('stack').databaseUrl, 'webhooks', async (session) => {
      const sweep = await new RetentionStore(session as unknown as Pool).sweep(30);
      const left = await session.query('SELECT id FROM deliveries WHERE id = ANY ($1::uuid[])', [[original, redelivery]]);
      expect(left.rowCount).toBe(0);
      return sweep;
    });
    expect(removed.deliveries).toBeGreaterThanOrEqual(2);
    expect(removed.events).toBeGreaterThanOrEqual(1);
    expect(removed.endpoints).toBeGreaterThanOrEqual(1);
    const queries = plans.map(({ query }) => query).join('\n');
    // The actions ran: redelivery_of set to NULL, fan-out cursors deleted.
    for (const action of ['SET "redelivery_of" = NULL', 'DELETE FROM ONLY "webhooks"."fanouts"']) {
      expect(queries).toContain(action);
    }
    // Attempts have no foreign key (migration 013), nor have deliveries to events and endpoints (017):
    // the sweep deletes attempts itself, and checks for deliveries itself, through indexes.
    expect(queries).not.toContain('DELETE FROM ONLY "webhooks"."attempts"');
    expect(queries).not.toContain('"event_id" FOR KEY SHARE');
    expect(queries).not.toContain('"endpoint_id" FOR KEY SHARE');
    // Where no index could answer, sequential scans priced out leave either a Seq Scan or a whole-index walk with a filter.
    const planOf = (start: string): string => plans.find(({ query }) => query.startsWith(start))?.plan ?? '';
    expect(planOf('WITH doomed AS')).toContain('attempts_delivery_idx');
    expect(planOf('UPDATE ONLY "webhooks"."deliveries" SET "redelivery_of" = NULL')).toContain('deliveries_redelivery_of_idx');
    expect(planOf('DELETE FROM events')).toContain('events_received_at_idx');
    expect(planOf('DELETE FROM events')).toContain('deliveries_event_endpoint_key');
    expect(planOf('DELETE FROM events')).toContain('deliveries_redelivered_event_idx');
    expect(seqScans).toEqual([]);
  });
});
