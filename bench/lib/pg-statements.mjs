// Per-statement Postgres cost of one bench run, when the server preloads pg_stat_statements
// (TWS_POSTGRES_SETTINGS="shared_preload_libraries=pg_stat_statements"); otherwise a no-op.
import pg from 'pg';

/** `reset()` starts the count (without waiting); `collect()` returns the top statements since then (or null). */
export async function statementStats(databaseUrl, top = 8) {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const { rows } = await db.query(`SELECT current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%' AS loaded`);
  if (!rows[0].loaded) {
    await db.end();
    return { reset: () => undefined, collect: async () => null };
  }
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  let since = performance.now();
  let resetting = Promise.resolve();
  return {
    reset() {
      since = performance.now();
      resetting = db.query('SELECT pg_stat_statements_reset()').then(() => undefined);
    },
    async collect() {
      try {
        await resetting;
        const seconds = (performance.now() - since) / 1000;
        const result = await db.query(
          `SELECT regexp_replace(left(query, 400), '\\s+', ' ', 'g') AS query, calls, rows, total_exec_time, total_plan_time
           FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time + total_plan_time DESC LIMIT $1`,
          [top],
        );
        return result.rows.map((row) => ({
          query: row.query.slice(0, 160),
          calls: Number(row.calls),
          rowsPerCall: Math.round(Number(row.rows) / Math.max(1, Number(row.calls))),
          meanMs: Math.round(((row.total_exec_time + row.total_plan_time) / Math.max(1, Number(row.calls))) * 100) / 100,
          // Planning share of meanMs (0 unless pg_stat_statements.track_planning=on).
          meanPlanMs: Math.round((row.total_plan_time / Math.max(1, Number(row.calls))) * 100) / 100,
          // Wall time in the statement per second of the run: on a busy machine more than its CPU share.
          msPerSecond: Math.round((row.total_exec_time + row.total_plan_time) / seconds),
        }));
      } finally {
        await db.end();
      }
    },
  };
}
