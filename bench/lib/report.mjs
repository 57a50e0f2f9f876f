// The tables printed at the end of a run (stdout), and the result files.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '@tws/devstack';
import { keptPace } from '../webhooks/sustained.mjs';
import { log } from './log.mjs';
import { targets } from './settings.mjs';

const resultsDir = fileURLToPath(new URL('../results', import.meta.url));
const mark = (ok) => (ok ? 'met' : 'MISSED');

export function table(headers, rows) {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) => `| ${cells.map((cell, i) => String(cell).padEnd(widths[i])).join(' | ')} |`;
  return [line(headers), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

const apiTable = (api) =>
  table(
    ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx/err', 'ceiling req/s', 'ceiling p99', 'ratio', 'target', 'result', 'CPU ms/req (ceiling)', 'CPU-cost ratio'],
    api.rows.map((row) => [
      row.endpoint,
      row.service.requestsPerSecond,
      row.service.p50Ms,
      row.service.p99Ms,
      `${row.service.non2xx}/${row.service.errors + row.service.timeouts}`,
      row.ceiling.requestsPerSecond,
      row.ceiling.p99Ms,
      `${row.ratio}×`,
      `≥ ${row.ratioTarget}×${row.p99TargetMs ? `, p99 ≤ ${row.p99TargetMs} ms` : ''}; 0 errors`,
      mark(row.met),
      `${row.service.serverCpuMsPerRequest} (${row.ceiling.serverCpuMsPerRequest})`,
      `${row.cpuCostRatio}×`,
    ]),
  );

const webhooksTable = ({ sustained, burst }) =>
  table(
    ['webhook run', 'changes/s', 'endpoints', 'delivered', 'deliveries/s', 'p50 ms', 'p99 ms', 'lost', 'dup', 'target', 'result'],
    [sustained, burst].map((run) => {
      const sustainedRun = run.label === 'sustained';
      const ok = run.lost === 0 && run.duplicateRequests === 0 && (!sustainedRun || keptPace(run));
      return [
        run.label,
        run.achievedChangesPerSecond,
        run.endpoints,
        `${run.deliveredUnique}/${run.expectedDeliveries}`,
        run.deliveriesPerSecondBetweenFirstAndLast,
        run.latencyMs.p50,
        run.latencyMs.p99,
        run.lost,
        run.duplicateRequests,
        sustainedRun ? `keeps pace with ≥ ${targets.deliveriesPerSecond}/s offered: p99 ≤ ${targets.deliveryP99Ms} ms, 0 lost` : '(max) 0 lost',
        mark(ok),
      ];
    }),
  );

const webTable = (web) =>
  table(
    ['page', 'mode', 'requests', 'server p50 / p95 / max ms', `over ${web.targetMs} ms`, 'server mean ms', 'client p50 / p95 / max ms', 'req/s', 'CPU ms/req web (tasks)', 'errors', 'target', 'result'],
    web.rows.map((row) => [
      row.page,
      row.mode,
      row.server.requests,
      `${row.server.p50Ms} / ${row.server.p95Ms} / ≤ ${row.server.maxMsAtMost ?? '∞'}`,
      row.server.overTarget,
      row.server.meanMs,
      `${row.client.p50Ms} / ${row.client.p95Ms} / ${row.client.maxMs}`,
      row.requestsPerSecond,
      `${row.cpuMsPerRequest.web} (${row.cpuMsPerRequest.tasks})`,
      row.errors,
      `server p95 ≤ ${web.targetMs} ms; 0 errors`,
      mark(row.met),
    ]),
  );

const rssTable = (rss) =>
  table(
    ['process', 'pid', 'RSS MB after the run', 'RSS MB idle at start', 'V8 heap used/total MB', 'external MB', 'target', 'result'],
    rss.map((row) => [
      row.name,
      row.pid,
      row.rssMb,
      row.rssMbAtStart ?? '-',
      row.heapTotalMb ? `${row.heapUsedMb}/${row.heapTotalMb}` : '-',
      row.externalMb ?? '-',
      `< ${targets.rssMb} MB`,
      mark(row.rssMb !== null && row.rssMb < targets.rssMb),
    ]),
  );

/** The API, webhook and memory tables, the host probes and the load average of the whole run. */
export function report(results) {
  const lines = [];
  if (results.api) lines.push(apiTable(results.api));
  if (results.webhooks) lines.push('', webhooksTable(results.webhooks));
  if (results.web) lines.push('', webTable(results.web));
  lines.push('', rssTable(results.rss));
  const probes = [`at start ${results.hostProbeMsAtStart} ms`];
  if (results.webhooks) probes.push(`before the sustained webhook run ${results.webhooks.sustained.hostProbeMsBefore} ms`);
  lines.push('', `host probe (the same CPU work timed on the idle stack; lower is faster): ${probes.join(', ')}`);
  lines.push(`load average (1/5/15 min): ${results.loadSamples.map((sample) => `${sample.phase}: ${sample.loadavg.join(' ')}`).join('; ')}`);
  return lines.join('\n');
}

/**
 * Writes bench/results/<start time>.json and, for a full run only, bench/results/latest.json (the
 * committed reference: a BENCH_ONLY run would leave out the other parts' keys).
 */
export function writeResults(results) {
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${results.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  const full = results.settings.only === 'all';
  if (full) writeFileSync(path.join(resultsDir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  log(`results written to ${path.relative(repoRoot, file)}${full ? ' and bench/results/latest.json' : ' (a partial run: latest.json, the full run\'s reference, is left as it was)'}`);
}
