import pg from 'pg';
import type { Registry } from 'prom-client';
import { registerPoolMetrics } from './platform-metrics.js';
import type { ReadinessCheck } from './readiness.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

const schemaNamePattern = /^[a-z_][a-z0-9_]*$/;
const settingNamePattern = /^[a-z_][a-z0-9_.]*$/;
const settingValuePattern = /^[A-Za-z0-9_.,-]+$/;

/** A pool whose connections use the service's own schema as search_path. */
export function createPool(options: {
  url: string;
  schema: string;
  applicationName: string;
  max?: number;
  /** How long a caller may wait for a free connection; keep it at the callers' gRPC deadline. */
  acquireTimeoutMs?: number;
  /** Session settings (GUCs) sent with the startup packet, so they hold before the first query. */
  settings?: Record<string, string>;
  /** Registers the pool gauges (pg_pool_*{pool}) on this registry; `pool` defaults to the application name. */
  metrics?: { registry: Registry; pool?: string };
}): pg.Pool {
  if (!schemaNamePattern.test(options.schema)) throw new Error(`invalid schema name ${options.schema}`);
  const settings = Object.entries(options.settings ?? {});
  for (const [name, value] of settings) {
    if (!settingNamePattern.test(name) || !settingValuePattern.test(value)) throw new Error(`invalid session setting ${name}=${value}`);
  }
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    application_name: options.applicationName,
    options: [`-c search_path=${options.schema},public`, ...settings.map(([name, value]) => `-c ${name}=${value}`)].join(' '),
    connectionTimeoutMillis: options.acquireTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => undefined);
  if (options.metrics) registerPoolMetrics(options.metrics.registry, options.metrics.pool ?? options.applicationName, pool, options.max ?? 10);
  return pool;
}

/** Runs `work` in a transaction; rolls back on any error. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // pg-pool removes its error listener from a client while it is checked out: without one, the server
  // ending the session between two statements (database restart, pg_terminate_backend) is an
  // unhandled 'error' event that kills the process. Keep the error; the next query fails anyway.
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken ??= error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (!broken) await client.query('ROLLBACK').catch(() => undefined);
    // "Client has encountered a connection error and is not queryable" hides the cause (57P01,
    // ECONNRESET …) that isDatabaseUnavailable maps to UNAVAILABLE: rethrow the cause.
    throw broken ?? error;
  } finally {
    client.removeListener('error', onError);
    // A broken client is destroyed, not returned to the pool.
    client.release(broken);
  }
}

/**
 * True for failures that mean "the database is not reachable or saturated right now" (pool wait
 * timed out, connection refused or reset, server shutting down): callers should answer
 * UNAVAILABLE (503), not INTERNAL.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', '57P01', '57P02', '57P03', '53300'].includes(code)) {
    return true;
  }
  return /timeout exceeded when trying to connect|Connection terminated/i.test(error.message);
}

/** A pool or a client inside a transaction: every store function accepts either. */
export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The SQLSTATEs the services act on. */
export const pgErrorCodes = { uniqueViolation: '23505', foreignKeyViolation: '23503' } as const;

/** True when `error` is a Postgres error with that SQLSTATE. */
export function isPgError(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && (error as { code: unknown }).code === code;
}

/** The readiness check of a service's own database: one round trip on the pool. */
export function postgresReadiness(pool: Queryable): ReadinessCheck {
  return { name: 'postgres', check: async () => void (await pool.query('SELECT 1')) };
}
