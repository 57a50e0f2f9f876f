import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Logger } from 'pino';

const schemaNamePattern = /^[a-z_][a-z0-9_]*$/;
const migrationFilePattern = /^\d+_.+\.sql$/;
/** First line of a migration that must run outside a transaction (e.g. CREATE INDEX CONCURRENTLY). */
const noTransactionMarker = /^--\s*migrate:\s*no-transaction\s*$/i;
const lockPollMs = 500;
/** SQLSTATE lock_not_available: a statement waited `lock_timeout` for a lock and gave up. */
const lockNotAvailable = '55P03';

/**
 * How long a transactional migration's statements may wait for a table lock before the whole
 * migration is rolled back and tried again (`lock_timeout`), and how often. While an ALTER TABLE waits
 * for its lock behind a long transaction, every query of that table queues behind the ALTER: the API
 * would stand still for as long as the other transaction runs. With the timeout the queue dissolves
 * after `lockTimeoutMs`, the API goes on, and the migration retries after a pause that grows.
 */
export interface MigrationLockPolicy {
  /** `lock_timeout` of each transactional migration, ms (0: wait forever, as Postgres does by default). */
  lockTimeoutMs: number;
  /** Tries of one migration before migrate fails naming the lock it could not get. */
  attempts: number;
  /** Pause before try n + 1: min(n × this, maxPauseMs), ms. */
  pauseMs: number;
  maxPauseMs: number;
}

export const defaultMigrationLockPolicy: MigrationLockPolicy = { lockTimeoutMs: 500, attempts: 30, pauseMs: 250, maxPauseMs: 5_000 };

/** A migration file as the runner reads it. */
export interface MigrationFile {
  /** The file name (`NNN_name.sql`), the version recorded in `schema_migrations`. */
  version: string;
  sql: string;
  /** sha256 (hex) of the file with CRLF line ends read as LF. */
  checksum: string;
  /** False when the first line is `-- migrate: no-transaction`. */
  transactional: boolean;
}

/** Raised when migrate must stop before changing anything: an applied migration's file was edited. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

export function migrationChecksum(sql: string): string {
  return createHash('sha256').update(sql.replace(/\r\n/g, '\n')).digest('hex');
}

/** Reads `NNN_name.sql` files of `directory`, in name order. */
export async function readMigrations(directory: string): Promise<MigrationFile[]> {
  const files = (await readdir(directory)).filter((file) => migrationFilePattern.test(file)).sort();
  return Promise.all(
    files.map(async (version) => {
      const sql = await readFile(path.join(directory, version), 'utf8');
      const firstLine = sql.split('\n', 1)[0]?.trim() ?? '';
      return { version, sql, checksum: migrationChecksum(sql), transactional: !noTransactionMarker.test(firstLine) };
    }),
  );
}

/**
 * Applies `NNN_name.sql` files from `directory` in order, each once, under an advisory lock so
 * concurrent runners (several replicas, a Helm hook) cannot race.
 *
 * Each file runs in its own transaction, unless its first line is `-- migrate: no-transaction`:
 * then it must hold exactly one statement (sent alone, so Postgres refuses a second one), which
 * runs outside any transaction (CREATE INDEX CONCURRENTLY); it is recorded after it succeeds, so
 * write it to be repeatable (IF NOT EXISTS) and the runner refuses to go on while the schema holds
 * an invalid index (what a failed concurrent build leaves).
 *
 * A transactional migration runs with `lock_timeout` (`lockPolicy`) and is retried when it times out
 * waiting for a lock, so it never holds up the API's queries for longer than that timeout. A
 * no-transaction one runs without: its one statement must take no lock that conflicts with writes
 * (CREATE INDEX CONCURRENTLY takes SHARE UPDATE EXCLUSIVE, and a lock timeout in its later waits
 * would leave an invalid index), or be a DO block of small batches that each commit.
 *
 * The sha256 of every applied file is recorded; migrate refuses, before applying anything, when an
 * applied file has changed since. Rows recorded before checksums existed get theirs on the first run.
 */
export async function runMigrations(options: {
  url: string;
  schema: string;
  directory: string;
  logger: Logger;
  lockPolicy?: MigrationLockPolicy;
}): Promise<string[]> {
  const { schema, logger } = options;
  const lockPolicy = options.lockPolicy ?? defaultMigrationLockPolicy;
  if (!schemaNamePattern.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const migrations = await readMigrations(options.directory);
  const client = new pg.Client({ connectionString: options.url, application_name: `migrate-${schema}` });
  await client.connect();
  const lockKey = `migrate:${schema}`;
  const applied: string[] = [];
  try {
    // Poll instead of blocking in pg_advisory_lock: a session waiting inside a statement holds a
    // snapshot that a CREATE INDEX CONCURRENTLY of the lock holder would wait for (a deadlock).
    while (!(await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [lockKey])).rows[0]?.locked) {
      await sleep(lockPollMs);
    }
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`SET search_path TO ${schema}, public`);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now(), checksum text)',
    );
    // Tables made by the runner before checksums: a nullable column without default is a catalog-only change.
    await client.query('ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text');
    const recorded = new Map(
      (await client.query<{ version: string; checksum: string | null }>('SELECT version, checksum FROM schema_migrations')).rows.map(
        (row) => [row.version, row.checksum],
      ),
    );
    refuseEditedMigrations(schema, migrations, recorded);
    for (const migration of migrations) {
      if (!recorded.has(migration.version) || recorded.get(migration.version) !== null) continue;
      await client.query('UPDATE schema_migrations SET checksum = $2 WHERE version = $1 AND checksum IS NULL', [
        migration.version,
        migration.checksum,
      ]);
      logger.info({ schema, migration: migration.version, checksum: migration.checksum }, 'checksum recorded for a migration applied before checksums');
    }
    for (const migration of migrations) {
      if (recorded.has(migration.version)) continue;
      if (migration.transactional) await applyInTransaction(client, schema, migration, lockPolicy, logger);
      else await applyWithoutTransaction(client, schema, migration);
      applied.push(migration.version);
      logger.info({ schema, migration: migration.version, transactional: migration.transactional }, 'migration applied');
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]).catch(() => undefined);
    await client.end();
  }
  return applied;
}

/**
 * An applied migration whose file differs from what was applied means the database and the code
 * disagree about the schema: stop, naming every such file. Recorded versions without a file (a
 * newer release's migrations, during a rollback) are left alone.
 */
function refuseEditedMigrations(schema: string, migrations: MigrationFile[], recorded: Map<string, string | null>): void {
  const edited = migrations.filter((migration) => {
    const checksum = recorded.get(migration.version);
    return typeof checksum === 'string' && checksum !== migration.checksum;
  });
  if (edited.length === 0) return;
  const names = edited.map((migration) => `${schema}/${migration.version}`).join(', ');
  throw new MigrationError(
    `migration ${names} changed after it was applied (its sha256 differs from the one recorded in ${schema}.schema_migrations): ` +
      'restore the applied file and put the change in a new migration',
  );
}

async function applyInTransaction(client: pg.Client, schema: string, migration: MigrationFile, policy: MigrationLockPolicy, logger: Logger): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    await client.query('BEGIN');
    try {
      // SET LOCAL: the timeout ends with the transaction (a migration may still set its own).
      await client.query(`SET LOCAL lock_timeout = ${Math.max(0, Math.floor(policy.lockTimeoutMs))}`);
      await client.query(migration.sql);
      await record(client, migration);
      await client.query('COMMIT');
      return;
    } catch (error) {
      await client.query('ROLLBACK');
      const timedOut = (error as { code?: unknown }).code === lockNotAvailable;
      if (timedOut && attempt < policy.attempts) {
        const pauseMs = Math.min(attempt * policy.pauseMs, policy.maxPauseMs);
        logger.warn({ schema, migration: migration.version, attempt, pauseMs, lockTimeoutMs: policy.lockTimeoutMs }, 'migration gave way to a lock held by another transaction; retrying');
        await sleep(pauseMs);
        continue;
      }
      const detail = timedOut
        ? `${(error as Error).message} (gave way ${attempt} times after waiting ${policy.lockTimeoutMs} ms each: a long transaction holds a lock the migration needs)`
        : (error as Error).message;
      throw new Error(`migration ${schema}/${migration.version} failed: ${detail}`, { cause: error });
    }
  }
}

async function applyWithoutTransaction(client: pg.Client, schema: string, migration: MigrationFile): Promise<void> {
  const name = `${schema}/${migration.version}`;
  await refuseInvalidIndexes(client, schema, `before the no-transaction migration ${name}`);
  // The extended protocol (one Parse) takes one statement only: Postgres refuses a second one
  // instead of running them together in an implicit transaction.
  const statement: pg.QueryConfig & { queryMode: 'extended' } = { text: migration.sql, queryMode: 'extended' };
  try {
    await client.query(statement);
  } catch (error) {
    const message = (error as Error).message;
    const detail = /multiple commands/i.test(message)
      ? 'a "-- migrate: no-transaction" migration must hold exactly one statement'
      : message;
    throw new Error(`migration ${name} failed: ${detail}`, { cause: error });
  }
  await refuseInvalidIndexes(client, schema, `after the no-transaction migration ${name}`);
  await record(client, migration);
}

async function record(client: pg.Client, migration: MigrationFile): Promise<void> {
  await client.query('INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)', [migration.version, migration.checksum]);
}

/** A failed CREATE INDEX CONCURRENTLY leaves an INVALID index behind, which IF NOT EXISTS would then skip. */
async function refuseInvalidIndexes(client: pg.Client, schema: string, when: string): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relnamespace = $1::regnamespace AND NOT i.indisvalid ORDER BY 1`,
    [schema],
  );
  if (rows.length === 0) return;
  const names = rows.map((row) => `${schema}.${row.name}`).join(', ');
  throw new MigrationError(
    `invalid index ${names} found ${when} (a failed concurrent build leaves one): ` +
      `drop it (DROP INDEX CONCURRENTLY ${schema}.${rows[0]!.name}) and run migrate again`,
  );
}
