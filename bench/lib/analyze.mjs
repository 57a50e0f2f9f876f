// Fresh planner statistics for the tables the API rows write, before each row. A row that follows
// another measures right after it wrote thousands of rows (the POST row creates ~20,000 tasks in
// 13 s), and autovacuum analyzes a changed table only on its next round (up to a minute later):
// until then Postgres plans the next row's statements on the statistics of a table a hundredth of
// its size, or on none at all when the fixture was made seconds before. A PATCH row right after the
// POST row (BENCH_ENDPOINTS='POST|PATCH') read and wrote its tasks at 9 and 6 ms a statement instead
// of 1 and 2, at 880 instead of ~2,100 req/s; the full run got away with it only because its GET rows
// give autovacuum the minute. A deployment under steady load has had that minute; so does each row now.
//
// The tasks schema only: the webhooks service's tables are still empty during the API half, and
// statistics taken of them empty made its fan-out statement 0.5 ms a delivery instead of 0.15 in the
// webhook runs that follow (its generic plan is made on them; autovacuum redoes them only a minute later).
import pg from 'pg';
import { log } from './log.mjs';

/** ANALYZE of every table of the `tasks` schema (a few hundred ms at the bench's sizes). */
export async function analyzeTasksSchema(databaseUrl, what) {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const started = performance.now();
    const { rows } = await db.query("SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = 'tasks'");
    for (const { name } of rows) await db.query(`ANALYZE ${name}`);
    log(`${what}: planner statistics of the tasks schema refreshed (ANALYZE of ${rows.length} tables, ${Math.round(performance.now() - started)} ms)`);
  } finally {
    await db.end();
  }
}
