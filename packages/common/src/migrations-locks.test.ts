import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runMigrations, type MigrationLockPolicy } from './migrations.js';

/**
 * `npm run migrate` on a table with rows that the API keeps writing (issue 21 item 4): while a
 * migration runs, a writer inserts and updates rows without pause, and a watcher asks Postgres every
 * 10 ms whether the writer is waiting for a lock the migration holds or has queued for
 * (pg_blocking_pids). The longest such stretch is what a migration costs the API in blocked writes.
 * Each safe way is checked against the unsafe one beside it, so the watcher is seen to catch a block.
 */
describe('migrations on a table that is being written', () => {
  const silent = pino({ level: 'silent' });
  const dirs: string[] = [];
  const schemas: string[] = [];
  let db: pg.Client;
  const url = (): string => inject('stack').databaseUrl;

  beforeAll(async () => {
    db = new pg.Client({ connectionString: url() });
    await db.connect();
  });
  afterAll(async () => {
    for (const schema of schemas) await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await db.end();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** A schema with `items` of `rows` rows (applied as its 001), and a directory to add migrations to. */
  async function table(rows: number): Promise<{ schema: string; write(file: string, sql: string): void; directory: string }> {
    const schema = `miglock_${randomBytes(6).toString('hex')}`;
    const directory = mkdtempSync(path.join(os.tmpdir(), 'tws-migration-locks-'));
    schemas.push(schema);
    dirs.push(directory);
    const write = (file: string, sql: string): void => writeFileSync(path.join(directory, file), sql);
    write(
      '001_items.sql',
      `CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL, n integer NOT NULL);
       INSERT INTO items (name, n) SELECT md5(g::text), g FROM generate_series(1, ${rows}) g;`,
    );
    await runMigrations({ url: url(), schema, directory, logger: silent });
    return { schema, write, directory };
  }

  /**
   * Runs `during` while a writer keeps inserting and updating `items` and a watcher samples whether
   * the migration's session (application_name migrate-<schema>) blocks it; the longest blocked stretch (ms).
   */
  async function blockedWhile(
    schema: string,
    during: () => Promise<unknown>,
  ): Promise<{ longestBlockedMs: number; blockedSamples: number; writes: number }> {
    const writer = new pg.Client({ connectionString: url() });
    const watcher = new pg.Client({ connectionString: url() });
    await Promise.all([writer.connect(), watcher.connect()]);
    const writerPid = (await writer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    let running = true;
    let writes = 0;
    const writing = (async () => {
      while (running) {
        await writer.query(`INSERT INTO ${schema}.items (name, n) VALUES ('w', $1)`, [writes]);
        await writer.query(`UPDATE ${schema}.items SET n = n + 1 WHERE id = $1`, [1 + (writes % 1000)]);
        writes += 1;
      }
    })();
    let longestBlockedMs = 0;
    let blockedSamples = 0;
    let blockedSince: number | null = null;
    const watching = (async () => {
      while (running) {
        const { rows } = await watcher.query<{ blocked: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = ANY (pg_blocking_pids($1)) AND a.application_name = $2) AS blocked`,
          [writerPid, `migrate-${schema}`],
        );
        const now = performance.now();
        if (rows[0]!.blocked) {
          blockedSamples += 1;
          blockedSince ??= now;
        } else blockedSince = null;
        if (blockedSince !== null) longestBlockedMs = Math.max(longestBlockedMs, now - blockedSince);
        await sleep(10);
      }
    })();
    try {
      await sleep(100);
      await during();
      await sleep(100);
    } finally {
      running = false;
      await Promise.all([writing, watching]);
      await Promise.all([writer.end(), watcher.end()]);
    }
    return { longestBlockedMs, blockedSamples, writes };
  }

  it('CREATE INDEX CONCURRENTLY (a no-transaction migration) never blocks the writes; a plain CREATE INDEX does', async () => {
    const t = await table(300_000);
    t.write('002_items_name.sql', '-- migrate: no-transaction\nCREATE INDEX CONCURRENTLY IF NOT EXISTS items_name_n ON items (name, n);\n');
    const concurrent = await blockedWhile(t.schema, () => runMigrations({ url: url(), schema: t.schema, directory: t.directory, logger: silent }));
    expect(concurrent.writes).toBeGreaterThan(0);
    expect(concurrent.blockedSamples).toBe(0);
    const valid = await db.query(`SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass('${t.schema}.items_name_n')`);
    expect(valid.rows).toEqual([{ valid: true }]);

    // The same index built the ordinary way holds a SHARE lock for the whole build: the writer waits.
    t.write('003_items_name_again.sql', 'CREATE INDEX items_name_n_plain ON items (name, n);\n');
    const plain = await blockedWhile(t.schema, () => runMigrations({ url: url(), schema: t.schema, directory: t.directory, logger: silent }));
    expect(plain.blockedSamples).toBeGreaterThan(0);
  });

  /** Holds an ACCESS SHARE lock on items (an open transaction that read it) for `ms`, like a long report query. */
  async function longReader(schema: string, ms: number): Promise<{ released: Promise<void> }> {
    const reader = new pg.Client({ connectionString: url() });
    await reader.connect();
    await reader.query('BEGIN');
    await reader.query(`SELECT count(*) FROM ${schema}.items`);
    // Wrapped: an async function returning the promise itself would wait for it.
    const released = (async () => {
      await sleep(ms);
      await reader.query('COMMIT');
      await reader.end();
    })();
    return { released };
  }

  it('an ALTER TABLE behind a long transaction gives way after lock_timeout and retries, instead of queueing every write behind it', async () => {
    const t = await table(1_000);
    t.write('002_items_note.sql', 'ALTER TABLE items ADD COLUMN note text;\n');
    const warnings: string[] = [];
    const logger = pino(
      { level: 'warn' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          warnings.push(chunk.toString());
          done();
        },
      }),
    );
    const { released } = await longReader(t.schema, 3_000);
    const safe = await blockedWhile(t.schema, () => runMigrations({ url: url(), schema: t.schema, directory: t.directory, logger }));
    await released;
    expect(safe.longestBlockedMs).toBeLessThan(1_000);
    expect(warnings.some((line) => line.includes('002_items_note.sql') && line.includes('retrying'))).toBe(true);
    const columns = await db.query(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'items' ORDER BY ordinal_position`, [t.schema]);
    expect(columns.rows.map((row: { column_name: string }) => row.column_name)).toEqual(['id', 'name', 'n', 'note']);

    // Without the timeout (Postgres's default) the ALTER waits the reader out, and every write queues behind it.
    t.write('003_items_tag.sql', 'ALTER TABLE items ADD COLUMN tag text;\n');
    const waitForever: MigrationLockPolicy = { lockTimeoutMs: 0, attempts: 1, pauseMs: 0, maxPauseMs: 0 };
    const { released: releasedAgain } = await longReader(t.schema, 3_000);
    const unsafe = await blockedWhile(t.schema, () => runMigrations({ url: url(), schema: t.schema, directory: t.directory, logger: silent, lockPolicy: waitForever }));
    await releasedAgain;
    expect(unsafe.longestBlockedMs).toBeGreaterThan(1_000);
  });

  it('fails naming the lock after the last try while the long transaction is still there', async () => {
    const t = await table(10);
    t.write('002_items_note.sql', 'ALTER TABLE items ADD COLUMN note text;\n');
    const { released } = await longReader(t.schema, 2_000);
    const policy: MigrationLockPolicy = { lockTimeoutMs: 100, attempts: 2, pauseMs: 10, maxPauseMs: 10 };
    await expect(runMigrations({ url: url(), schema: t.schema, directory: t.directory, logger: silent, lockPolicy: policy })).rejects.toThrow(
      `migration ${t.schema}/002_items_note.sql failed: canceling statement due to lock timeout (gave way 2 times after waiting 100 ms each`,
    );
    await released;
    expect(await runMigrations({ url: url(), schema: t.schema, directory: t.directory, logger: silent })).toEqual(['002_items_note.sql']);
  });
});
