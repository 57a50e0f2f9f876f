/**
 * A Postgres schema of a test's own, made by a service's migrations, with a pool on it: for store
 * and worker tests that must not share the stack's own schema (the stack's services would take and
 * finish the rows a test is still reading). `drop` removes the schema and ends the pool.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createLogger, createPool, runMigrations, type Pool } from '@tws/common';

export interface ScratchSchema {
  /** The schema's name (for a session of a test's own, e.g. under auto_explain). */
  schema: string;
  /** A pool whose connections use the schema (their search_path). */
  pool: Pool;
  /** Drops the schema (CASCADE) and ends the pool. */
  drop(): Promise<void>;
}

export async function scratchSchema(options: {
  databaseUrl: string;
  /** The schema's name before a random suffix (letters, digits and `_`). */
  prefix: string;
  /** The service's migrations directory. */
  migrations: URL;
  applicationName: string;
  /** Connections in the pool. */
  max: number;
}): Promise<ScratchSchema> {
  const schema = `${options.prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const logger = createLogger(options.applicationName, 'silent');
  await runMigrations({ url: options.databaseUrl, schema, directory: fileURLToPath(options.migrations), logger });
  const pool = createPool({ url: options.databaseUrl, schema, applicationName: options.applicationName, max: options.max });
  return {
    schema,
    pool,
    async drop() {
      try {
        await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      } finally {
        await pool.end();
      }
    },
  };
}
