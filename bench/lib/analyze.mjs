// Fresh planner statistics before a measurement. A row that follows another measures right after it
// wrote thousands of rows (the POST row creates ~20,000 tasks in 13 s), and autovacuum analyzes a
// changed table only on its next round (up to a minute later): until then Postgres plans the next
// row's statements on the statistics of a table a hundredth of its size, or on none at all when the
// fixture was made seconds before. A PATCH row right after the POST row (BENCH_ENDPOINTS='POST|PATCH')
// read and wrote its tasks at 9 and 6 ms a statement instead of 1 and 2, at 880 instead of ~1,900
// req/s; the full run got away with it only because its GET rows give autovacuum the minute. A
// deployment under steady load has had that minute; so does each row now.
import pg from 'pg';
import { log } from './log.mjs';

/** ANALYZE of the whole database (a few hundred ms at the bench's sizes). */
export async function analyzeDatabase(databaseUrl, what) {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const started = performance.now();
    await db.query('ANALYZE');
    log(`${what}: planner statistics refreshed (ANALYZE, ${Math.round(performance.now() - started)} ms)`);
  } finally {
    await db.end();
  }
}
