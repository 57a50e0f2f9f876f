import { afterAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from './db.js';

describe('createPool', () => {
  const pools: Pool[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
  });

  it('applies session settings from the first query of every connection', async () => {
    const pool = createPool({
      url: inject('stack').databaseUrl,
      schema: 'webhooks',
      applicationName: 'db-settings-test',
      max: 3,
      settings: { random_page_cost: '1.1', statement_timeout: '4s' },
    });
    pools.push(pool);
    // Three connections opened at once, each asked at once: no query may run before the settings.
    const answers = await Promise.all(
      [0, 1, 2].map(() =>
        pool.query<{ cost: string; timeout: string; path: string }>(
          `SELECT current_setting('random_page_cost') AS cost, current_setting('statement_timeout') AS timeout, current_setting('search_path') AS path`,
        ),
      ),
    );
    for (const { rows } of answers) expect(rows[0]).toEqual({ cost: '1.1', timeout: '4s', path: 'webhooks,public' });
  });

  it('refuses a setting that could smuggle other startup options', () => {
    expect(() =>
      createPool({ url: inject('stack').databaseUrl, schema: 'webhooks', applicationName: 'x', settings: { work_mem: '1MB -c fsync=off' } }),
    ).toThrow(/invalid session setting work_mem/);
  });
});
