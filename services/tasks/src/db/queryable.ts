import type pg from 'pg';

/** A pool or a client inside a transaction: every repository function accepts either. */
export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The SQLSTATE of a unique violation. */
export const uniqueViolation = '23505';

export function isPgError(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && (error as { code: unknown }).code === code;
}
