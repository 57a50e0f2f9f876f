// The big-database stage: GET and PATCH /v1/tasks/:id p50/p99 on tasks of one workspace, first on the
// database as the run found it (next to empty), then again after seeding 1,000,000 tasks across
// 2,000 other workspaces (SCALE_DB_TASKS, SCALE_DB_WORKSPACES) and vacuuming/analysing them. Beside
// the latencies, what Postgres itself counted meanwhile (pg_stat_user_tables): sequential scans and
// the rows they read, per table of the tasks schema. A hot statement without an index shows up there
// as rows read per request that grow with the database, whatever the latency on a fast disk.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { inParallel } from '../lib/api-client.mjs';
import { cpuMeter, serverSideCores } from '../lib/cpu.mjs';
import { load } from '../lib/load.mjs';
import { log } from '../lib/log.mjs';
import { p50p99, round } from '../lib/numbers.mjs';
import { scaleWorkspace } from './fixture.mjs';
import { seedProjectTasks, seedWorkspaces } from './seed.mjs';
import { settings, targets } from './settings.mjs';

/** Rows read per request by sequential scans of one table that count as "this statement reads the whole table". */
export const seqScanRowsPerRequestLimit = 1000;

/** Sequential scans and index scans per table of the tasks schema, as Postgres has counted them so far. */
async function scanCounters(db) {
  // Backends report their counters when idle for a moment; then read a fresh snapshot.
  await sleep(1_500);
  await db.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await db.query(
    `SELECT relname, seq_scan::bigint AS seq_scan, seq_tup_read::bigint AS seq_tup_read, coalesce(idx_scan, 0)::bigint AS idx_scan
     FROM pg_stat_user_tables WHERE schemaname = 'tasks'`,
  );
  return new Map(rows.map((row) => [row.relname, { seqScan: Number(row.seq_scan), seqTupRead: Number(row.seq_tup_read), idxScan: Number(row.idx_scan) }]));
}

/** Tables whose sequential scans read rows between two `scanCounters`, with rows read per request. */
function seqScansBetween(before, after, requests) {
  const tables = {};
  for (const [table, now] of after) {
    const then = before.get(table) ?? { seqScan: 0, seqTupRead: 0, idxScan: 0 };
    const rowsRead = now.seqTupRead - then.seqTupRead;
    if (now.seqScan > then.seqScan && rowsRead > 0) tables[table] = { seqScans: now.seqScan - then.seqScan, rowsReadPerRequest: round(rowsRead / requests, 1) };
  }
  return tables;
}

/**
 * `settings.dbRequests` requests (after a quarter as many as warm-up: the first measurement comes
 * right after the stack started), SCALE_DB_CONCURRENCY at once, each on a random task.
 */
async function measureRequests(db, fixture, method, taskIds) {
  const send = async (i) => {
    const id = taskIds[Math.floor(Math.random() * taskIds.length)];
    const started = performance.now();
    if (method === 'GET') await fixture.client.call('GET', `/v1/tasks/${id}`);
    else await fixture.client.call('PATCH', `/v1/tasks/${id}`, { name: `Scale task renamed ${i}` });
    return performance.now() - started;
  };
  await inParallel(Math.ceil(settings.dbRequests / 4), settings.dbConcurrency, send);
  const before = await scanCounters(db);
  const cpu = cpuMeter();
  const started = performance.now();
  const latencies = await inParallel(settings.dbRequests, settings.dbConcurrency, send);
  const seconds = (performance.now() - started) / 1000;
  const cores = cpu();
  const seqScans = seqScansBetween(before, await scanCounters(db), settings.dbRequests);
  const { p50, p99 } = p50p99(latencies);
  return {
    requests: settings.dbRequests,
    p50Ms: p50,
    p99Ms: p99,
    requestsPerSecond: round(settings.dbRequests / seconds, 0),
    serverCpuMsPerRequest: round((serverSideCores(cores) * 1000 * seconds) / settings.dbRequests, 3),
    postgresCpuMsPerRequest: round(((cores['postgres (all backends)'] ?? 0) * 1000 * seconds) / settings.dbRequests, 3),
    seqScans,
    loadavgAtEnd: load(),
  };
}

async function measureBoth(db, fixture, taskIds, label) {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM tasks');
  log(`db: measuring GET and PATCH on the database ${label} (${rows[0].n} tasks)`);
  const get = await measureRequests(db, fixture, 'GET', taskIds);
  const patch = await measureRequests(db, fixture, 'PATCH', taskIds);
  log(`db ${label}: GET p50 ${get.p50Ms} / p99 ${get.p99Ms} ms, PATCH p50 ${patch.p50Ms} / p99 ${patch.p99Ms} ms; seq scans ${JSON.stringify({ get: get.seqScans, patch: patch.seqScans })}`);
  return { tasksInDatabase: rows[0].n, get, patch };
}

export async function benchBigDatabase(stack, db, deadline) {
  log('db: creating the measured workspace');
  const fixture = await scaleWorkspace(stack, db, 'Scale db');
  await seedProjectTasks(db, {
    workspaceId: fixture.workspaceId, projectId: fixture.project.id, sectionId: fixture.project.defaultListId, count: settings.dbOwnTasks - 1, template: fixture.template, assigneeId: fixture.ownerId,
  });
  const taskIds = (await db.query('SELECT id FROM tasks WHERE project_id = $1', [fixture.project.id])).rows.map((row) => row.id);
  const empty = await measureBoth(db, fixture, taskIds, 'as found');
  const tasksPerWorkspace = Math.max(1, Math.round(settings.dbTasks / settings.dbWorkspaces));
  if (Date.now() > deadline) return { empty, skipped: 'the run\'s deadline passed before seeding the big database' };
  log(`db: seeding ${settings.dbWorkspaces} workspaces × ${tasksPerWorkspace} tasks (+ a comment on every tenth)`);
  const seeded = await seedWorkspaces(db, { workspaces: settings.dbWorkspaces, tasksPerWorkspace, template: fixture.template, deadline });
  log(`db: seeded ${seeded.tasks} tasks in ${round(seeded.seedSeconds, 0)} s, vacuum + analyse ${round(seeded.vacuumSeconds, 0)} s`);
  const big = await measureBoth(db, fixture, taskIds, 'after seeding');
  const ratio = (a, b) => (a && b ? round(b / a, 2) : null);
  const result = {
    seeded,
    empty,
    big,
    p99Ratio: { get: ratio(empty.get.p99Ms, big.get.p99Ms), patch: ratio(empty.patch.p99Ms, big.patch.p99Ms) },
  };
  // A statement that scans a table of the big database reads thousands of rows per request; the small
  // tables (statuses of one workspace…) may be read whole by the planner's choice, that is no defect.
  const noSeqScans = (run) => Object.values(run.seqScans).every((scan) => scan.rowsReadPerRequest < seqScanRowsPerRequestLimit);
  result.met = {
    get: result.p99Ratio.get !== null && result.p99Ratio.get <= targets.bigDbP99Factor,
    patch: result.p99Ratio.patch !== null && result.p99Ratio.patch <= targets.bigDbP99Factor,
    indexesOnly: noSeqScans(big.get) && noSeqScans(big.patch),
  };
  return result;
}
