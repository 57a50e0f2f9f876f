import type { Pool, PoolClient } from '@tws/common';
import { renderTaskListKeysetPage, type TaskListKey } from './task-list-page.js';

/**
 * Bytes of list JSON per chunk (a chunk holds at least one task, so one large task makes it larger).
 * Under 128 KiB, V8's largest regular object: a chunk's string dies young (a scavenge) instead of
 * waiting in large-object space for a full collection (10 streams of 128 KiB chunks took the
 * service to 208 MB of RSS, of 64 KiB ones to 182 MB).
 */
export const listChunkBytes = 64 * 1024;
/** Tasks per chunk at most (a batch reads this many + 1 rows: ~200 tasks of a typical ~330 bytes fill a chunk). */
export const listChunkTasks = 200;

/** application_name of a connection while it streams a list (pg_stat_activity shows it). */
export const snapshotApplicationName = 'tasks task-list-stream';

export interface SnapshotLimits {
  /** statement_timeout of each batch. */
  statementTimeoutMs: number;
  /**
   * idle_in_transaction_session_timeout: Postgres ends the session itself if this process stops
   * reading without ending the transaction (it cannot, short of a crash: a backstop).
   */
  idleTimeoutMs: number;
}

/**
 * The snapshot transaction's settings (SET LOCAL takes no parameters: both numbers are integers this
 * process chose, config.ts bounds them). The application name tells these sessions apart in
 * pg_stat_activity while they stream. No bitmap scans: every batch must walk the section's index in
 * order from its key (limit + 1 entries). With statistics from before a project grew (a bulk
 * import, autovacuum not round yet), the planner takes the section for a few hundred rows and
 * prefers a bitmap scan of all of it after the key plus a sort: each batch would read the rest of the
 * section (a 50,000-task list took 3.4 s instead of 1.2 s).
 */
export function snapshotSettings(limits: SnapshotLimits): string {
  return (
    `SET LOCAL statement_timeout = ${Math.trunc(limits.statementTimeoutMs)}; ` +
    `SET LOCAL idle_in_transaction_session_timeout = ${Math.trunc(limits.idleTimeoutMs)}; ` +
    `SET LOCAL application_name = '${snapshotApplicationName}'; ` +
    'SET LOCAL enable_bitmapscan = off'
  );
}

/**
 * A project's task list read in one snapshot: a REPEATABLE READ READ ONLY transaction on its own
 * connection, walked in keyset batches (store/task-list-page.ts, the same index walk as the paged
 * list, section by section) of about `listChunkBytes` each. `next()` renders the next chunk of the JSON array only when
 * asked, so the caller decides the pace (its reader's); nothing else of the list is held here.
 * `close()` ends the transaction and returns the connection (destroyed if it cannot be ended
 * cleanly); call it in every case, also after the last chunk.
 */
export class TaskListSnapshot {
  private after: TaskListKey | null = null;
  /** Index in `sections` of the section being walked. */
  private section = 0;
  private started = false;
  private done = false;
  private closed = false;

  private constructor(
    private readonly client: PoolClient,
    private readonly workspaceId: string,
    private readonly projectId: string,
    /** The list's version in this snapshot (migration 006). */
    readonly version: string,
    /** The project's sections in display order (store/task-json.ts `displayOrder`). */
    private readonly sections: readonly string[],
  ) {}

  /** Opens the snapshot; null (nothing held) when the workspace has no such project. */
  static async open(pool: Pool, workspaceId: string, projectId: string, limits: SnapshotLimits): Promise<TaskListSnapshot | null> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      await client.query(snapshotSettings(limits));
      // The first statement after BEGIN takes the snapshot every batch then reads.
      const { rows } = await client.query<{ version: string }>({
        name: 'tasks-task-list-snapshot-version',
        text: 'SELECT list_version::text AS version FROM projects WHERE workspace_id = $1 AND id = $2',
        values: [workspaceId, projectId],
      });
      const version = rows[0]?.version;
      if (version === undefined) {
        await endTransaction(client);
        return null;
      }
      // Ids only (sections_project_position_idx), so a batch walks one section's tasks index.
      const sections = await client.query<{ id: string }>({
        name: 'tasks-task-list-snapshot-sections',
        text: 'SELECT id FROM sections WHERE project_id = $1 ORDER BY position, created_at, id',
        values: [projectId],
      });
      return new TaskListSnapshot(client, workspaceId, projectId, version, sections.rows.map((row) => row.id));
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw error;
    }
  }

  /** The next chunk of the JSON array (`[`… first, …`]` last), or null after the last one. */
  async next(): Promise<string | null> {
    if (this.done || this.closed) return null;
    let tasks = '';
    // One section at a time (the keyset page filtered to it: a batch reads at most
    // `listChunkTasks` + 1 rows, however many sections follow); an empty one is skipped.
    while (tasks === '' && this.section < this.sections.length) {
      const page = await renderTaskListKeysetPage(this.client, {
        workspaceId: this.workspaceId,
        projectId: this.projectId,
        limit: listChunkTasks,
        maxBytes: listChunkBytes,
        after: this.after,
        filters: { listId: this.sections[this.section] },
      });
      if (page.found !== 'page') throw new Error(`task list snapshot: ${page.found}`);
      tasks = page.json.slice(1, -1);
      this.after = page.next;
      if (page.next === null) this.section += 1;
    }
    this.done = this.section >= this.sections.length;
    const chunk = (this.started ? (tasks === '' ? '' : ',') : '[') + tasks + (this.done ? ']' : '');
    this.started = true;
    return chunk;
  }

  /** Ends the transaction and releases the connection; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await endTransaction(this.client);
  }
}

/** ROLLBACK (a read-only transaction has nothing to commit) and release; a connection that fails it is destroyed. */
async function endTransaction(client: PoolClient): Promise<void> {
  try {
    await client.query('ROLLBACK');
    client.release();
  } catch (error) {
    client.release(error instanceof Error ? error : true);
  }
}
