// The tables of `npm run bench:scale` (stdout), each figure beside its target, and the result files
// bench/results/scale-<start time>.json and, for a full run at the default sizes, bench/results/scale-latest.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '@tws/devstack';
import { log } from '../lib/log.mjs';
import { table } from '../lib/report.mjs';
import { seqScanRowsPerRequestLimit } from './db.mjs';
import { fullRun, targets } from './settings.mjs';

const resultsDir = fileURLToPath(new URL('../results', import.meta.url));
const mark = (ok) => (ok ? 'met' : 'MISSED');
const dash = (value) => (value === null || value === undefined ? '-' : value);

function listTable(list) {
  return table(
    ['tasks', 'bytes', 'reads ok/err', 'TTFB p50 / max ms', 'total p50 / max ms', 'peak RSS MB (service)', 'answer', 'target', 'result'],
    list.rows.map((row) =>
      row.skipped
        ? [row.size, '-', '-', '-', '-', '-', '-', '-', `skipped: ${row.skipped}`]
        : [
            row.size,
            dash(row.bytes),
            `${row.reads}/${row.errors}`,
            `${dash(row.ttfbMs.p50)} / ${dash(row.ttfbMs.max)}`,
            `${dash(row.totalMs.p50)} / ${dash(row.totalMs.max)}`,
            `${row.largestPeakRss.peakRssMb} (${row.largestPeakRss.service})${row.exited.length ? `; EXITED ${row.exited.join('; ')}` : ''}`,
            row.check,
            `TTFB ≤ ${targets.listTtfbMs} ms, total ≤ ${targets.listTotalMs} ms, RSS < ${targets.rssMb} MB`,
            // The targets are for the largest size; smaller ones are shown against the same yardstick.
            `${mark(row.met.ttfb)} / ${mark(row.met.total)} / ${mark(row.met.rss)}${row.met.correct ? '' : ' / WRONG ANSWER'}`,
          ],
    ),
  );
}

/** `table rows/req` of every table sequential scans read during the GETs and PATCHes. */
const seqScanned = (run) =>
  [['GET', run.get.seqScans], ['PATCH', run.patch.seqScans]]
    .flatMap(([method, scans]) => Object.entries(scans).map(([table, scan]) => `${method} ${table} ${scan.rowsReadPerRequest}`))
    .join(', ') || 'none';

function dbTable(db) {
  const rows = [];
  const runRow = (label, run, ratio, met) => [
    label,
    run.tasksInDatabase,
    `${run.get.p50Ms} / ${run.get.p99Ms}`,
    `${run.patch.p50Ms} / ${run.patch.p99Ms}`,
    `${run.get.serverCpuMsPerRequest} / ${run.patch.serverCpuMsPerRequest}`,
    seqScanned(run),
    ratio,
    met,
  ];
  rows.push(runRow('as found', db.empty, '-', '-'));
  if (db.big) {
    rows.push(
      runRow(
        `after seeding ${db.seeded.workspaces} workspaces`,
        db.big,
        `GET ${db.p99Ratio.get}×, PATCH ${db.p99Ratio.patch}× (≤ ${targets.bigDbP99Factor}×)`,
        `${mark(db.met.get)} / ${mark(db.met.patch)} / seq scans < ${seqScanRowsPerRequestLimit} rows/req ${mark(db.met.indexesOnly)}`,
      ),
    );
  } else rows.push(['big database', '-', '-', '-', '-', '-', '-', `skipped: ${db.skipped}`]);
  return table(['database', 'tasks', 'GET p50 / p99 ms', 'PATCH p50 / p99 ms', 'CPU ms/req GET / PATCH', 'seq-scanned rows/req', 'p99 big ÷ as found', 'result'], rows);
}

function fanoutTable(fanout) {
  return table(
    ['endpoints', 'registered in s', 'delivered', 'first ms', 'all delivered s', 'deliveries/s', 'lost', 'dup', 'webhooks peak RSS MB', 'target', 'result'],
    fanout.rows.map((row) =>
      row.skipped
        ? [row.endpoints, '-', '-', '-', '-', '-', '-', '-', '-', '-', `skipped: ${row.skipped}`]
        : [
            row.endpoints,
            row.registration.seconds,
            `${row.delivered}/${row.endpoints}`,
            dash(row.firstDeliveryMs),
            dash(row.allDeliveredSeconds ?? (row.lastDeliverySeconds === null ? null : `(${row.lastDeliverySeconds}, not all)`)),
            dash(row.deliveriesPerSecond),
            row.lost,
            row.duplicates,
            `${row.webhooksPeakRssMb}${row.exited.length ? `; EXITED ${row.exited.join('; ')}` : ''}`,
            `all within ${targets.fanoutSeconds} s${row.endpoints >= 1000 ? `, ≥ ${targets.fanoutDeliveriesPerSecond}/s` : ''}, 0 lost, 0 dup`,
            mark(row.met),
          ],
    ),
  );
}

export function scaleReport(results) {
  const lines = [];
  for (const [stage, result] of Object.entries(results.stages)) {
    if (result.skipped) lines.push(`${stage}: skipped: ${result.skipped}`, '');
    else if (result.failed) lines.push(`${stage}: FAILED: ${result.failed}`, '');
    else if (stage === 'list') lines.push(`List of a project's tasks (${result.readers} readers × ${result.readsPerReader} reads)`, listTable(result), '');
    else if (stage === 'db') lines.push('Single-task GET and PATCH, as found vs the big database', dbTable(result), '');
    else if (stage === 'fanout') lines.push('Fan-out of one task change', fanoutTable(result), '');
  }
  lines.push(`load average (1/5/15 min): ${results.loadSamples.map((sample) => `${sample.phase}: ${sample.loadavg.join(' ')}`).join('; ')}`);
  return lines.join('\n');
}

export function writeScaleResults(results) {
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `scale-${results.startedAt.replace(/[:.]/g, '-')}.json`);
  const text = `${JSON.stringify(results, null, 2)}\n`;
  writeFileSync(file, text);
  if (fullRun) writeFileSync(path.join(resultsDir, 'scale-latest.json'), text);
  log(
    `results written to ${path.relative(repoRoot, file)}${fullRun ? ' and bench/results/scale-latest.json' : ' (a partial or resized run: scale-latest.json, the full run\'s reference, is left as it was)'}`,
  );
}
