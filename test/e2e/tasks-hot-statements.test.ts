/**
 * Every hot statement of the tasks store walks an index (issue 21 item 4): on a seeded table, each
 * statement as the store sends it (captured from the store's own functions, with real ids) is
 * EXPLAINed with sequential scans priced out (`enable_seqscan = off`, as a big database would price
 * them), in the custom and the generic plan a named prepared statement may switch to: no plan may
 * still hold a Seq Scan, which is what is left when no index can answer. The foreign-key action that
 * migration 018 serves (member removal → API keys → their comments) is checked the same way, and the
 * check itself is shown to catch a statement no index serves.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditRecord, listAudit, recordAudit, type Queryable } from '@tws/common';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { seqScansIn, underAutoExplain } from '../support/auto-explain.js';
import { createProject, createTask, keyOf, type CreatedProject } from '../support/fixtures.js';
import { findApiKeyByHash, touchApiKey } from '../../services/tasks/src/store/api-keys.js';
import { listTaskComments } from '../../services/tasks/src/store/comments.js';
import { deleteMember } from '../../services/tasks/src/store/members.js';
import { deletePublishedOutboxRows, markOutboxPublished, outboxBacklog, pendingOutboxRows } from '../../services/tasks/src/store/outbox.js';
import { lockSection } from '../../services/tasks/src/store/projects.js';
import { readTaskForChange, readTasksForChange, writeTaskChange, writeTaskChanges, type TaskWrite } from '../../services/tasks/src/store/task-changes.js';
import { renderTaskList, renderTasks } from '../../services/tasks/src/store/task-json.js';
import { createTasks, type NewTask } from '../../services/tasks/src/store/task-creation.js';
import { renderTaskListKeysetPage } from '../../services/tasks/src/store/task-list-page.js';
import { readTaskByNumber } from '../../services/tasks/src/store/task-page.js';
import { deleteComment, deleteTask, insertComment, nextPositionInSection, taskExists } from '../../services/tasks/src/store/tasks.js';
import { getMember, getWorkspace } from '../../services/tasks/src/store/workspaces.js';

interface Statement {
  name: string;
  text: string;
  values: unknown[];
}

/** A Queryable that answers nothing and keeps what it was asked: the store's statements as sent. */
function recorder(): { db: Queryable; statements: Statement[] } {
  const statements: Statement[] = [];
  const query = async (config: string | { name?: string; text: string; values?: unknown[] }, values?: unknown[]): Promise<{ rows: never[]; rowCount: number }> => {
    const text = typeof config === 'string' ? config : config.text;
    const name = typeof config === 'string' ? text.replace(/\s+/g, ' ').slice(0, 60) : (config.name ?? text.replace(/\s+/g, ' ').slice(0, 60));
    statements.push({ name, text, values: (typeof config === 'string' ? values : (config.values ?? values)) ?? [] });
    return { rows: [], rowCount: 0 };
  };
  return { db: { query } as unknown as Queryable, statements };
}

/** Runs a store function against the recorder; it fails on the empty answer, which does not matter here. */
async function capture(run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch {
    // the statement is recorded before its answer is read
  }
}

describe('hot statements of the tasks store use indexes', () => {
  let db: pg.Client;
  let ws: TestWorkspace;
  let project: CreatedProject;
  let task: { id: string; number: number; section_id: string; status_id: string };

  beforeAll(async () => {
    db = new pg.Client({ connectionString: inject('stack').databaseUrl });
    await db.connect();
    await db.query('SET search_path TO tasks, public');
    ws = await createWorkspace({ plan: 'pro' });
    project = await createProject(keyOf(ws));
    const created = await createTask(keyOf(ws), { projectId: project.id, listId: project.defaultListId });
    // 5,000 more tasks and a comment on every tenth, written straight into the table (the triggers render them as usual).
    await db.query(
      `INSERT INTO tasks (workspace_id, project_id, section_id, number, name, position, status_id)
       SELECT $1, $2, $3, 1 + g, 'Seeded ' || g, g, (SELECT status_id FROM tasks WHERE id = $4) FROM generate_series(1, 5000) g`,
      [ws.workspace.id, project.id, project.defaultListId, created.id],
    );
    await db.query(`UPDATE projects SET next_task_number = 5002 WHERE id = $1`, [project.id]);
    await db.query(`UPDATE workspaces SET task_count = task_count + 5000 WHERE id = $1`, [ws.workspace.id]);
    await db.query(
      `INSERT INTO comments (workspace_id, task_id, body, author_api_key_id, author_name)
       SELECT workspace_id, id, '[]'::jsonb, $2, 'seed' FROM tasks WHERE project_id = $1 AND number % 10 = 0`,
      [project.id, ws.apiKey.id],
    );
    for (const table of ['tasks', 'comments', 'outbox', 'api_keys', 'members']) await db.query(`ANALYZE ${table}`);
    task = (await db.query('SELECT id, number, section_id, status_id FROM tasks WHERE id = $1', [created.id])).rows[0];
  });
  afterAll(async () => {
    await db.end();
  });

  /** The plan (JSON text) of a statement with sequential scans priced out. */
  async function planOf(statement: Statement, planCacheMode: 'force_custom_plan' | 'force_generic_plan'): Promise<string> {
    await db.query('BEGIN');
    try {
      await db.query('SET LOCAL enable_seqscan = off');
      await db.query(`SET LOCAL plan_cache_mode = ${planCacheMode}`);
      const { rows } = await db.query<{ 'QUERY PLAN': unknown }>({ text: `EXPLAIN (FORMAT JSON) ${statement.text}`, values: statement.values });
      return JSON.stringify(rows[0]!['QUERY PLAN']);
    } finally {
      await db.query('ROLLBACK');
    }
  }

  /** The relations a plan still reads with a Seq Scan when sequential scans are priced out (no index can answer). */
  async function seqScansOf(statement: Statement, planCacheMode: 'force_custom_plan' | 'force_generic_plan'): Promise<string[]> {
    return seqScansIn(await planOf(statement, planCacheMode));
  }

  it('every statement of a GET, PATCH, list, comment, auth and outbox relay walks indexes only', async () => {
    const { db: store, statements } = recorder();
    const workspaceId = ws.workspace.id;
    const refs = { statusId: task.status_id, listId: task.section_id, assigneeId: ws.owner.userId, systemType: 'done' as const };
    const write = {
      id: task.id,
      workspaceId,
      version: '1',
      change: { name: 'x', sectionId: task.section_id, position: 1, isCompleted: false, statusId: task.status_id, assigneeId: null, description: null },
      eventId: '00000000-0000-4000-8000-000000000001',
      event: { event: 'task.updated', createdAt: new Date().toISOString() },
      requestId: null,
      traceparent: null,
      audit: auditRecord({ workspaceId, action: 'task.updated', resourceType: 'task', resourceId: task.id, changes: ['name'] }),
    } as unknown as TaskWrite;
    await capture(() => renderTasks(store, [{ workspaceId, id: task.id }]));
    await capture(() => readTaskForChange(store, workspaceId, task.id, refs, true));
    await capture(() => readTasksForChange(store, workspaceId, [{ id: task.id, refs }]));
    await capture(() => writeTaskChange(store, write));
    await capture(() => writeTaskChanges(store, [write]));
    await capture(() => renderTaskList(store, workspaceId, project.id, '0'));
    // A StreamTasks batch (store/task-list-stream.ts): the keyset page filtered to one section.
    await capture(() =>
      renderTaskListKeysetPage(store, { workspaceId, projectId: project.id, limit: 400, maxBytes: 128 * 1024, after: null, filters: { listId: task.section_id } }),
    );
    await capture(() =>
      renderTaskListKeysetPage(store, { workspaceId, projectId: project.id, limit: 100, after: { sectionId: task.section_id, position: 10, number: 11 }, filters: {} }),
    );
    await capture(() => listTaskComments(store, { workspaceId, taskId: task.id, memberUserId: null, window: { newest: 20 } }));
    await capture(() =>
      listTaskComments(store, { workspaceId, taskId: task.id, memberUserId: ws.owner.userId, window: { after: { createdAt: '2020-01-01T00:00:00.000000Z', id: task.id }, limit: 20 } }),
    );
    await capture(() => insertComment(store, { workspaceId, taskId: task.id, body: [], authorApiKeyId: null, authorUserId: null, authorName: 'x' }));
    await capture(() => deleteComment(store, workspaceId, task.id));
    await capture(() => findApiKeyByHash(store, Buffer.alloc(32, 1)));
    await capture(() => touchApiKey(store, ws.apiKey.id));
    await capture(() => getMember(store, workspaceId, ws.owner.userId));
    await capture(() => getWorkspace(store, workspaceId));
    await capture(() => readTaskByNumber(store, { workspaceId, userId: ws.owner.userId, taskPrefix: ws.workspace.taskPrefix, number: task.number }));
    await capture(() => nextPositionInSection(store, task.section_id));
    await capture(() => lockSection(store, project.id, task.section_id));
    await capture(() => taskExists(store, workspaceId, task.id));
    await capture(() => deleteTask(store, workspaceId, task.id));
    await capture(() => deleteMember(store, workspaceId, ws.owner.userId));
    await capture(() => pendingOutboxRows(store, 500));
    await capture(() => markOutboxPublished(store, [task.id]));
    await capture(() => deletePublishedOutboxRows(store, 60_000, 1000));
    await capture(() => outboxBacklog(store));
    // The audit trail (migration 017): its insert, and GET /v1/audit's first and next pages.
    await capture(() => recordAudit(store, { workspaceId, action: 'task.deleted', resourceType: 'task', resourceId: task.id }));
    await capture(() => listAudit(store, { workspaceId, limit: 51 }));
    await capture(() => listAudit(store, { workspaceId, before: { at: new Date(), id: task.id }, limit: 51 }));
    expect(statements.length).toBeGreaterThanOrEqual(28);

    const scans: string[] = [];
    for (const statement of statements) {
      for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
        for (const relation of await seqScansOf(statement, mode)) scans.push(`${statement.name} (${mode}): ${relation}`);
      }
    }
    expect(scans).toEqual([]);
  });

  it('creating a task: every statement create_tasks runs inside (plpgsql, foreign-key checks) walks indexes (auto_explain)', async () => {
    const item = {
      id: '00000000-0000-4000-8000-0000000000a1',
      name: 'Created under auto_explain',
      assigneeId: ws.owner.userId,
      createdAt: new Date(),
      eventId: '00000000-0000-4000-8000-0000000000a2',
      event: { event: 'task.created', data: {} },
      requestId: null,
      traceparent: null,
      audit: auditRecord({ workspaceId: ws.workspace.id, action: 'task.created', resourceType: 'task', resourceId: '00000000-0000-4000-8000-0000000000a1' }),
    } as unknown as NewTask;
    // In a session of its own: the seeding INSERT of beforeAll planned the foreign-key checks of tasks
    // (projects, sections, statuses) in `db`'s session, with sequential scans allowed, and Postgres
    // keeps those plans for the session; the helper's session makes every plan under enable_seqscan = off.
    const section = { workspaceId: ws.workspace.id, projectId: project.id, sectionId: project.defaultListId };
    const { result, plans, seqScans } = await underAutoExplain(inject('stack').databaseUrl, 'tasks', (session) => createTasks(session, section, [item], 100));
    expect(result).toEqual([{ outcome: 'created', number: 5002 }]);
    // The function's own statements (project, section lock, member, workspace, numbers, position, status, inserts) at least.
    expect(plans.length).toBeGreaterThanOrEqual(8);
    expect(seqScans).toEqual([]);
  });

  it("removing a member nulls their keys' comments through an index (migration 018), and the check catches a statement no index serves", async () => {
    // What the foreign-key action ON DELETE SET NULL of comments.author_api_key_id runs per deleted key.
    const setNull = { name: 'comments_author_api_key_id_fkey action', text: 'UPDATE comments SET author_api_key_id = NULL WHERE author_api_key_id = $1', values: [ws.apiKey.id] };
    expect(await seqScansOf(setNull, 'force_generic_plan')).toEqual([]);
    expect(await planOf(setNull, 'force_generic_plan')).toContain('comments_author_api_key_idx');

    const byName = { name: 'tasks by name', text: 'SELECT id FROM tasks WHERE name = $1', values: ['Seeded 7'] };
    expect(await seqScansOf(byName, 'force_custom_plan')).toEqual(['tasks']);
  });
});
