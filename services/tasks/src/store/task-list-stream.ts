import type { Pool, PoolClient } from '@tws/common';

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
 * pg_stat_activity while they stream. No bitmap scans and no sorts: a section's cursor must walk its
 * index in order, so each FETCH reads the rows it returns. A cursor is planned for a fast start
 * (cursor_tuple_fraction) and takes that walk today; these make sure no statistics (from before a
 * bulk import, or of a section that is most of the table) turn it into reading and sorting the whole
 * section before its first row, as the keyset batches did on stale statistics before (3.4 s instead
 * of 1.2 s for a 50,000-task list).
 */
export function snapshotSettings(limits: SnapshotLimits): string {
  return (
    `SET LOCAL statement_timeout = ${Math.trunc(limits.statementTimeoutMs)}; ` +
    `SET LOCAL idle_in_transaction_session_timeout = ${Math.trunc(limits.idleTimeoutMs)}; ` +
    `SET LOCAL application_name = '${snapshotApplicationName}'; ` +
    'SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off'
  );
}

/**
 * A task's list JSON over this many bytes is not read with its section's rows but alone, by id, when
 * its turn comes: a batch of rows read ahead holds at most `listChunkTasks` × this (800 KiB), however
 * large descriptions are (a description is capped at 1 MiB of JSON).
 */
export const inlineRowBytes = 4096;

/** The name of the snapshot's cursor (one section at a time). */
const cursorName = 'task_list_section';

/**
 * A section's tasks in display order: one index walk of tasks_section_position_number_idx (migration
 * 019), read through a cursor (`FETCH`ed a batch at a time), so each batch continues the walk where
 * the last one stopped instead of planning and starting it again. A large task's JSON comes as NULL
 * with its id (read alone; see `inlineRowBytes`).
 */
export const sectionRowsSql = `
  SELECT CASE WHEN octet_length(t.list_json) <= ${inlineRowBytes} THEN t.list_json END AS json,
         CASE WHEN octet_length(t.list_json) > ${inlineRowBytes} THEN t.id END AS id
  FROM tasks t WHERE t.section_id = $1 ORDER BY t.position, t.number`;

/** A row of `sectionRowsSql` (rowMode 'array'): the task's list JSON, or null and the id of a large one. */
type SectionRow = [json: string | null, id: string | null];

/**
 * A project's task list read in one snapshot: a REPEATABLE READ READ ONLY transaction on its own
 * connection, walked section by section (display order, store/task-json.ts `displayOrder`) through
 * one cursor per section (`sectionRowsSql`). `next()` reads and renders the next chunk of the JSON
 * array (about `listChunkBytes`, at least one task) only when asked, so the caller decides the pace
 * (its reader's); besides that chunk this holds at most one batch of rows read ahead. `close()` ends
 * the transaction and returns the connection (destroyed if it cannot be ended cleanly); call it in
 * every case, also after the last chunk.
 */
export class TaskListSnapshot {
  /** Index in `sections` of the section being walked. */
  private section = 0;
  private cursorOpen = false;
  /** Rows read from the cursor and not rendered yet (at most one batch). */
  private rows: SectionRow[] = [];
  private rowAt = 0;
  /** Smoothed bytes of a row, so a batch asks for about one chunk's worth of rows. */
  private rowBytes = 330;
  private started = false;
  private done = false;
  private closed = false;

  private constructor(
    private readonly client: PoolClient,
    /** The list's version in this snapshot (migration 006). */
    readonly version: string,
    /** The project's sections in display order (store/task-json.ts `displayOrder`). */
    private readonly sections: readonly string[],
  ) {}

  /**
   * Opens the snapshot; null (nothing held) when the workspace has no such project. Two round trips
   * (the time to the first byte of a list is mostly round trips when many lists are read at once):
   * the transaction and its settings in one simple query, then the list's version and its sections.
   */
  static async open(pool: Pool, workspaceId: string, projectId: string, limits: SnapshotLimits): Promise<TaskListSnapshot | null> {
    const client = await pool.connect();
    try {
      await client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${snapshotSettings(limits)}`);
      // The first statement after BEGIN takes the snapshot every batch then reads. Section ids only
      // (sections_project_position_idx), in display order (store/task-json.ts `displayOrder`): every
      // section's tasks are the project's.
      const { rows } = await client.query<{ version: string; sections: string[] }>({
        name: 'tasks-task-list-snapshot-open',
        text: `SELECT p.list_version::text AS version,
                 ARRAY(SELECT s.id::text FROM sections s WHERE s.project_id = p.id ORDER BY s.position, s.created_at, s.id) AS sections
               FROM projects p WHERE p.workspace_id = $1 AND p.id = $2`,
        values: [workspaceId, projectId],
      });
      const opened = rows[0];
      if (opened === undefined) {
        await endTransaction(client);
        return null;
      }
      return new TaskListSnapshot(client, opened.version, opened.sections);
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw error;
    }
  }

  /** The next chunk of the JSON array (`[`… first, …`]` last), or null after the last one. */
  async next(): Promise<string | null> {
    if (this.done || this.closed) return null;
    const parts: string[] = [];
    let bytes = 0;
    while (bytes < listChunkBytes && parts.length < listChunkTasks) {
      const row = await this.nextRow();
      if (row === null) break;
      const json = row[0] ?? (await this.largeTask(row[1]));
      parts.push(json);
      bytes += json.length;
    }
    this.done = this.section >= this.sections.length && this.rowAt >= this.rows.length;
    const tasks = parts.join(',');
    const chunk = (this.started ? (tasks === '' ? '' : ',') : '[') + tasks + (this.done ? ']' : '');
    this.started = true;
    return chunk;
  }

  /** The next row in display order (the next section's cursor opened, an empty one skipped), null after the last. */
  private async nextRow(): Promise<SectionRow | null> {
    while (this.rowAt >= this.rows.length) {
      this.rows = [];
      this.rowAt = 0;
      if (this.section >= this.sections.length) return null;
      if (!this.cursorOpen) {
        await this.client.query({ text: `DECLARE ${cursorName} NO SCROLL CURSOR FOR ${sectionRowsSql}`, values: [this.sections[this.section]] });
        this.cursorOpen = true;
      }
      const asked = Math.max(1, Math.min(listChunkTasks, Math.floor(listChunkBytes / this.rowBytes)));
      // An integer this process computed (FETCH takes no parameter).
      this.rows = (await this.client.query<SectionRow>({ text: `FETCH ${asked} FROM ${cursorName}`, rowMode: 'array' })).rows;
      if (this.rows.length < asked) {
        // The section's walk is over: its cursor is closed before the next one is declared.
        await this.closeCursor();
        this.section += 1;
      }
      const inline = this.rows.filter((row) => row[0] !== null);
      if (inline.length > 0) this.rowBytes = inline.reduce((sum, row) => sum + row[0]!.length, 0) / inline.length;
    }
    return this.rows[this.rowAt++]!;
  }

  /** A task whose list JSON is over `inlineRowBytes`, read by its id in this snapshot. */
  private async largeTask(id: string | null): Promise<string> {
    const { rows } = await this.client.query<{ list_json: string }>({
      name: 'tasks-task-list-snapshot-large-task',
      text: 'SELECT list_json FROM tasks WHERE id = $1',
      values: [id],
    });
    const json = rows[0]?.list_json;
    if (json === undefined) throw new Error(`task list snapshot: task ${String(id)} is gone from its own snapshot`);
    return json;
  }

  private async closeCursor(): Promise<void> {
    if (!this.cursorOpen) return;
    this.cursorOpen = false;
    await this.client.query(`CLOSE ${cursorName}`);
  }

  /** Ends the transaction and releases the connection; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // ROLLBACK closes an open cursor too.
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
