import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrationChecksum, runMigrations } from './migrations.js';

/** The migration runner against the test stack's PostgreSQL, each case in a schema of its own. */
describe('runMigrations', () => {
  const logger = pino({ level: 'silent' });
  const dirs: string[] = [];
  const schemas: string[] = [];
  let db: pg.Client;

  beforeAll(async () => {
    db = new pg.Client({ connectionString: inject('stack').databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    for (const schema of schemas) await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await db.end();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh schema name and an empty migrations directory; `write` adds or replaces a file. */
  function setUp(): { schema: string; directory: string; write(file: string, sql: string): void; migrate(): Promise<string[]> } {
    const schema = `migtest_${randomBytes(6).toString('hex')}`;
    const directory = mkdtempSync(path.join(os.tmpdir(), 'tws-migrations-'));
    schemas.push(schema);
    dirs.push(directory);
    return {
      schema,
      directory,
      write: (file, sql) => writeFileSync(path.join(directory, file), sql),
      migrate: () => runMigrations({ url: inject('stack').databaseUrl, schema, directory, logger }),
    };
  }

  const recorded = async (schema: string): Promise<Array<{ version: string; checksum: string | null }>> =>
    (await db.query<{ version: string; checksum: string | null }>(`SELECT version, checksum FROM ${schema}.schema_migrations ORDER BY version`)).rows;

  it('refuses at migrate, naming the file, when an applied migration was edited, and applies nothing', async () => {
    const m = setUp();
    m.write('001_items.sql', 'CREATE TABLE items (id int PRIMARY KEY);');
    expect(await m.migrate()).toEqual(['001_items.sql']);
    m.write('001_items.sql', 'CREATE TABLE items (id int PRIMARY KEY, name text);');
    m.write('002_more.sql', 'CREATE TABLE more (id int);');
    await expect(m.migrate()).rejects.toThrow(`migration ${m.schema}/001_items.sql changed after it was applied`);
    // Nothing after the check ran: 002 is neither applied nor recorded.
    expect((await recorded(m.schema)).map((row) => row.version)).toEqual(['001_items.sql']);
    expect((await db.query(`SELECT to_regclass('${m.schema}.more') AS t`)).rows[0].t).toBeNull();
    // Restoring the file lets migrate go on.
    m.write('001_items.sql', 'CREATE TABLE items (id int PRIMARY KEY);');
    expect(await m.migrate()).toEqual(['002_more.sql']);
  });

  it('runs a "-- migrate: no-transaction" migration outside a transaction (CREATE INDEX CONCURRENTLY)', async () => {
    const m = setUp();
    m.write('001_items.sql', "CREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items SELECT n, 'n' || n FROM generate_series(1, 1000) n;");
    const concurrently = 'CREATE INDEX CONCURRENTLY IF NOT EXISTS items_name ON items (name);\n';
    // Without the marker Postgres refuses it, as every migration runs in a transaction.
    m.write('002_items_name.sql', concurrently);
    await expect(m.migrate()).rejects.toThrow(/002_items_name\.sql failed: CREATE INDEX CONCURRENTLY cannot run inside a transaction block/);
    m.write('002_items_name.sql', `-- migrate: no-transaction\n-- The list is read by name.\n${concurrently}`);
    expect(await m.migrate()).toEqual(['002_items_name.sql']);
    const index = await db.query<{ valid: boolean }>(
      `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass('${m.schema}.items_name')`,
    );
    expect(index.rows).toEqual([{ valid: true }]);
    expect((await recorded(m.schema)).map((row) => row.version)).toEqual(['001_items.sql', '002_items_name.sql']);
    expect(await m.migrate()).toEqual([]);
  });

  it('refuses a no-transaction migration with more than one statement, and one that leaves an invalid index', async () => {
    const m = setUp();
    m.write('001_items.sql', 'CREATE TABLE items (id int, code text); INSERT INTO items VALUES (1, \'a\'), (2, \'a\');');
    m.write('002_two.sql', '-- migrate: no-transaction\nCREATE INDEX CONCURRENTLY items_id ON items (id);\nCREATE INDEX CONCURRENTLY items_code ON items (code);\n');
    await expect(m.migrate()).rejects.toThrow(`migration ${m.schema}/002_two.sql failed: a "-- migrate: no-transaction" migration must hold exactly one statement`);
    expect((await recorded(m.schema)).map((row) => row.version)).toEqual(['001_items.sql']);

    // A unique build over duplicates fails and leaves an INVALID index; IF NOT EXISTS would skip it next time.
    m.write('002_two.sql', '-- migrate: no-transaction\nCREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS items_code ON items (code);\n');
    await expect(m.migrate()).rejects.toThrow(/002_two\.sql failed: could not create unique index/);
    await expect(m.migrate()).rejects.toThrow(`invalid index ${m.schema}.items_code found before the no-transaction migration ${m.schema}/002_two.sql`);
    await db.query(`DROP INDEX CONCURRENTLY ${m.schema}.items_code`);
    await db.query(`DELETE FROM ${m.schema}.items WHERE id = 2`);
    expect(await m.migrate()).toEqual(['002_two.sql']);
  });

  it('records checksums for a database migrated by the runner before checksums, then guards those files', async () => {
    const m = setUp();
    const files = {
      '001_items.sql': 'CREATE TABLE items (id int PRIMARY KEY);',
      '002_seed.sql': 'INSERT INTO items VALUES (1);',
    };
    for (const [file, sql] of Object.entries(files)) m.write(file, sql);
    // What the previous runner left: its table (no checksum column) and one row per applied file.
    await db.query(`CREATE SCHEMA ${m.schema}`);
    await db.query(`CREATE TABLE ${m.schema}.schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const [file, sql] of Object.entries(files)) {
      await db.query(`SET search_path TO ${m.schema}`);
      await db.query(sql);
      await db.query(`INSERT INTO ${m.schema}.schema_migrations (version) VALUES ($1)`, [file]);
    }
    await db.query('RESET search_path');

    m.write('003_more.sql', 'INSERT INTO items VALUES (2);');
    expect(await m.migrate()).toEqual(['003_more.sql']);
    expect(await recorded(m.schema)).toEqual([
      { version: '001_items.sql', checksum: migrationChecksum(files['001_items.sql']) },
      { version: '002_seed.sql', checksum: migrationChecksum(files['002_seed.sql']) },
      { version: '003_more.sql', checksum: migrationChecksum('INSERT INTO items VALUES (2);') },
    ]);
    // Nothing applied twice.
    expect((await db.query(`SELECT id FROM ${m.schema}.items ORDER BY id`)).rows).toEqual([{ id: 1 }, { id: 2 }]);
    m.write('002_seed.sql', 'INSERT INTO items VALUES (7);');
    await expect(m.migrate()).rejects.toThrow(`migration ${m.schema}/002_seed.sql changed after it was applied`);
  });
});
