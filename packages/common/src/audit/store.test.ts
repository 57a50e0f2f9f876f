import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runWithRequestId } from '../request-id.js';
import { runWithActor } from './actor.js';
import { listAudit, recordAudit, sweepAudit } from './store.js';

/** The audit store against the test stack's PostgreSQL, in a schema of its own made by the real migration. */
describe('audit store', () => {
  const schema = `audittest_${randomBytes(6).toString('hex')}`;
  let pool: pg.Pool;
  const workspaceId = randomUUID();

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: inject('stack').databaseUrl, options: `-c search_path=${schema}`, max: 2 });
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query(readFileSync(new URL('../../../../services/tasks/migrations/017_audit_events.sql', import.meta.url), 'utf8'));
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  it('records the actor and request id of the context, and lists newest first with a keyset cursor', async () => {
    await runWithRequestId('req-1', () =>
      runWithActor({ type: 'apiKey', id: randomUUID(), name: 'ci' }, async () => {
        for (let i = 0; i < 5; i += 1) {
          await recordAudit(pool, { workspaceId, action: 'task.updated', resourceType: 'task', resourceId: `t${i}`, changes: ['name', 'name', 'statusId'] });
        }
      }),
    );
    await recordAudit(pool, { workspaceId: randomUUID(), action: 'task.created', resourceType: 'task', resourceId: 'other' });
    const all = await listAudit(pool, { workspaceId, limit: 201 });
    expect(all).toHaveLength(5);
    expect(all[0]).toMatchObject({ actor: { type: 'apiKey', name: 'ci' }, requestId: 'req-1', changes: ['name', 'statusId'] });
    const sorted = [...all].sort((a, b) => b.at.getTime() - a.at.getTime() || (a.id < b.id ? 1 : -1));
    expect(all.map((row) => row.id)).toEqual(sorted.map((row) => row.id));
    const seen: string[] = [];
    let before;
    for (;;) {
      const page = await listAudit(pool, { workspaceId, before, limit: 2 });
      if (page.length === 0) break;
      seen.push(...page.map((row) => row.id));
      const last = page.at(-1)!;
      before = { at: last.at, id: last.id };
    }
    expect(seen).toEqual(all.map((row) => row.id));
  });

  it('records `system` when no edge named an actor', async () => {
    const ws = randomUUID();
    await recordAudit(pool, { workspaceId: ws, action: 'member.added', resourceType: 'member', resourceId: 'u' });
    expect((await listAudit(pool, { workspaceId: ws, limit: 10 }))[0]!.actor).toEqual({ type: 'system', id: null, name: null });
  });

  it('writes nothing when the transaction of the change rolls back', async () => {
    const ws = randomUUID();
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await recordAudit(client, { workspaceId: ws, action: 'task.deleted', resourceType: 'task', resourceId: 'x' });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect(await listAudit(pool, { workspaceId: ws, limit: 10 })).toEqual([]);
  });

  it('the retention sweep deletes, in batches, exactly the rows older than N days', async () => {
    const ws = randomUUID();
    for (let i = 0; i < 7; i += 1) await recordAudit(pool, { workspaceId: ws, action: 'task.created', resourceType: 'task', resourceId: `old${i}` });
    await pool.query(`UPDATE audit_events SET at = now() - interval '31 days' WHERE workspace_id = $1`, [ws]);
    await recordAudit(pool, { workspaceId: ws, action: 'task.created', resourceType: 'task', resourceId: 'recent' });
    await pool.query(`INSERT INTO audit_events (id, workspace_id, at, actor_type, action, resource_type, resource_id)
                      VALUES ($1, $2, now() - interval '29 days', 'system', 'task.created', 'task', 'day29')`, [randomUUID(), ws]);
    const before = (await pool.query<{ n: string }>('SELECT count(*) AS n FROM audit_events')).rows[0]!.n;
    expect(await sweepAudit(pool, 30, 3)).toBe(7);
    const left = await listAudit(pool, { workspaceId: ws, limit: 10 });
    expect(left.map((row) => row.resourceId).sort()).toEqual(['day29', 'recent']);
    expect(Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM audit_events')).rows[0]!.n)).toBe(Number(before) - 7);
  });
});
