/**
 * The shared write of concurrent PATCHes (`writeTaskChanges`, one statement for a batch) against the
 * stack's Postgres: its rows travel as one JSON parameter. A failed shared statement is retried by
 * each PATCH on its own path, so the API would not show it failing: this calls it directly and checks
 * what it wrote, for every kind of value it carries (a description set and one cleared, quotes,
 * non-ASCII text, an event payload, an audit record), and that a stale version writes nothing.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditRecord, type Queryable } from '@tws/common';
import { writeTaskChanges, type TaskWrite } from '../../services/tasks/src/store/task-changes.js';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { analyzedInBothPlans, rowsWorkedThrough } from '../support/auto-explain.js';
import { createProject, createTask, getTask, keyOf, type CreatedProject } from '../support/fixtures.js';
import { seedTasks } from '../support/seed-tasks.js';

describe('writeTaskChanges (the batched PATCH write)', () => {
  let db: pg.Client;
  let ws: TestWorkspace;
  let project: CreatedProject;

  beforeAll(async () => {
    db = new pg.Client({ connectionString: inject('stack').databaseUrl });
    await db.connect();
    await db.query('SET search_path TO tasks, public');
    ws = await createWorkspace();
    project = await createProject(keyOf(ws));
  });
  afterAll(async () => {
    await db.end();
  });

  it('writes every task of the batch with its event and audit row, and nothing for a stale version', async () => {
    const ids = [];
    for (let n = 0; n < 3; n += 1) ids.push((await createTask(keyOf(ws), { projectId: project.id, listId: project.defaultListId })).id);
    const { rows } = await db.query<{ id: string; version: string; section_id: string; status_id: string; position: number }>(
      'SELECT id, xmin::text AS version, section_id, status_id, position FROM tasks WHERE id = ANY ($1::uuid[])',
      [ids],
    );
    const description = [{ type: 'paragraph', children: [{ text: 'Ünïcödé, "quotes", back\\slash and 🎉' }] }];
    const writes = rows.map((row, n): TaskWrite => {
      const name = `Batched "${n}" — ✓`;
      const event = { event: 'task.updated', createdAt: new Date().toISOString(), data: { task: { id: row.id, name } } };
      return {
        id: row.id,
        workspaceId: ws.workspace.id,
        // The third was read before someone else's change: a stale version.
        version: n === 2 ? String(Number(row.version) - 1) : row.version,
        change: {
          name,
          sectionId: row.section_id,
          position: row.position,
          isCompleted: n === 1,
          statusId: row.status_id,
          assigneeId: null,
          description: n === 0 ? { value: description } : n === 1 ? { value: null } : null,
        },
        eventId: randomUUID(),
        event,
        requestId: `req-${n}`,
        traceparent: null,
        audit: auditRecord({ workspaceId: ws.workspace.id, action: 'task.updated', resourceType: 'task', resourceId: row.id, changes: ['name'] }),
      } as unknown as TaskWrite;
    });

    const written = await writeTaskChanges(db as unknown as Queryable, writes);

    expect(written.map((json) => json !== null)).toEqual([true, true, false]);
    const [first, second] = [JSON.parse(written[0]!), JSON.parse(written[1]!)];
    expect(first).toMatchObject({ id: writes[0]!.id, name: writes[0]!.change.name, description, isCompleted: false });
    expect(second).toMatchObject({ id: writes[1]!.id, name: writes[1]!.change.name, description: null, isCompleted: true });
    // What GET answers is what the write rendered; the stale one is unchanged.
    expect(await getTask(keyOf(ws), writes[0]!.id)).toMatchObject({ name: writes[0]!.change.name, description });
    expect((await getTask(keyOf(ws), writes[2]!.id)).name).not.toBe(writes[2]!.change.name);
    // One outbox row (the event, as sent) and one audit row per written task, none for the stale one.
    const outbox = await db.query<{ id: string; payload: unknown; request_id: string | null }>(
      'SELECT id, payload, request_id FROM outbox WHERE id = ANY ($1::uuid[]) ORDER BY request_id',
      [writes.map((write) => write.eventId)],
    );
    expect(outbox.rows).toEqual(writes.slice(0, 2).map((write) => ({ id: write.eventId, payload: write.event, request_id: write.requestId })));
    const audit = await db.query<{ resource_id: string; changes: unknown }>(
      "SELECT resource_id, changes FROM audit_events WHERE workspace_id = $1 AND action = 'task.updated' AND resource_id = ANY ($2::text[]) ORDER BY resource_id",
      [ws.workspace.id, writes.map((write) => write.id)],
    );
    expect(audit.rows).toEqual(
      writes
        .slice(0, 2)
        .map((write) => ({ resource_id: write.id, changes: ['name'] }))
        .sort((a, b) => (a.resource_id < b.resource_id ? -1 : 1)),
    );
  });

  it('does work in proportion to its rows, not to their square (500 tasks at once, as removing a member unassigns them)', async () => {
    const seeded = await createProject(keyOf(ws));
    await seedTasks(db, { workspaceId: ws.workspace.id, projectId: seeded.id, sectionIds: [seeded.defaultListId], count: 500 });
    const { rows } = await db.query<{ id: string; version: string; section_id: string; status_id: string; position: number; name: string }>(
      'SELECT id, xmin::text AS version, section_id, status_id, position, name FROM tasks WHERE project_id = $1',
      [seeded.id],
    );
    expect(rows).toHaveLength(500);
    const writes = rows.map(
      (row): TaskWrite =>
        ({
          id: row.id,
          workspaceId: ws.workspace.id,
          version: row.version,
          change: { name: row.name, sectionId: row.section_id, position: row.position, isCompleted: false, statusId: row.status_id, assigneeId: null, description: null },
          eventId: randomUUID(),
          event: { event: 'task.updated', createdAt: new Date().toISOString(), data: { task: { id: row.id } } },
          requestId: null,
          traceparent: null,
          audit: auditRecord({ workspaceId: ws.workspace.id, action: 'task.updated', resourceType: 'task', resourceId: row.id, changes: ['assigneeId'] }),
        }) as unknown as TaskWrite,
    );
    // The statement as the store sends it, then its rows worked through in its custom and its generic plan
    // (a nested loop of its CTEs, which the planner expects one row of, would be 500 × 500).
    let statement: { text: string; values: unknown[] } | undefined;
    const capture = {
      query: async (config: { text: string; values: unknown[] }) => {
        statement = config;
        return { rows: [] };
      },
    };
    await writeTaskChanges(capture as unknown as Queryable, writes);
    const plans = await analyzedInBothPlans(db, statement!);
    for (const plan of plans) expect(plan['Actual Rows']).toBe(500);
    const worked = Math.max(...plans.map(rowsWorkedThrough));
    expect(worked).toBeGreaterThan(500);
    expect(worked).toBeLessThan(40 * 500);
  });
});
