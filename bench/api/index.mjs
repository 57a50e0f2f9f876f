// The API half: each endpoint through the gateway against a bare-fastify ceiling serving the same
// bytes, measured in the same run; one row per endpoint (BENCH_ENDPOINTS picks some by name).
import { analyzeTasksSchema } from '../lib/analyze.mjs';
import { waitForPipelineIdle } from '../lib/kafka.mjs';
import { watch } from '../lib/cpu.mjs';
import { log } from '../lib/log.mjs';
import { round } from '../lib/numbers.mjs';
import { statementStats } from '../lib/pg-statements.mjs';
import { rssMbOf } from '../lib/rss.mjs';
import { endpointFilter, settings } from '../lib/settings.mjs';
import { startCeiling } from './ceiling.mjs';
import { createTask } from './create-task.mjs';
import { createApiFixture } from './fixture.mjs';
import { getTask } from './get-task.mjs';
import { listTasks } from './list-tasks.mjs';
import { measureAgainstCeiling, sliceSeconds } from './measure.mjs';
import { updateTask } from './update-task.mjs';

const endpointDefinitions = [getTask, listTasks, createTask, updateTask];

/** The ceiling and the gateway in alternating slices (api/measure.mjs), and how they compare. */
async function measureEndpoint(stack, endpoint) {
  const slices = `${settings.rounds} × ${sliceSeconds()} s`;
  log(`API: ${endpoint.name}: ${settings.warmupS} s warm-up each, then the ceiling (bare fastify) and the gateway in turn, ${slices} each, at ${settings.connections} connections`);
  // Postgres's top statements of the gateway's slices, when it preloads pg_stat_statements (else null).
  const statements = await statementStats(stack.infra.databaseUrl, 12);
  const { ceilingRow, serviceRow } = await measureAgainstCeiling(endpoint.name, endpoint, {
    // Writes make outbox rows and Kafka events: each run's settle before the next begins, so they do
    // not run in the next slice (the ceiling's included).
    settle: endpoint.writes ? () => waitForPipelineIdle(stack, `settling ${endpoint.name}`, 60_000, { quiet: true }) : undefined,
    afterWarmUp: () => statements.reset(),
  });
  const topStatements = await statements.collect();
  if (topStatements) log(`  Postgres's top statements: ${JSON.stringify(topStatements, null, 1)}`);
  const ratio = serviceRow.requestsPerSecond / ceilingRow.requestsPerSecond;
  const ok =
    serviceRow.non2xx === 0 &&
    serviceRow.errors === 0 &&
    serviceRow.timeouts === 0 &&
    ratio >= endpoint.ratioTarget &&
    (endpoint.p99Target === undefined || serviceRow.p99Ms <= endpoint.p99Target);
  return {
    endpoint: endpoint.name,
    // Ceiling CPU cost / stack CPU cost per request: the throughput ratio a machine with the CPU to itself would show.
    cpuCostRatio: round(ceilingRow.serverCpuMsPerRequest / serviceRow.serverCpuMsPerRequest, 3),
    service: serviceRow,
    ceiling: ceilingRow,
    ratio: round(ratio, 3),
    ratioTarget: endpoint.ratioTarget,
    ...(topStatements ? { topStatements } : {}),
    p99TargetMs: endpoint.p99Target ?? null,
    met: ok,
  };
}

export async function benchApi(stack) {
  const fixture = await createApiFixture(stack);
  const ceiling = await startCeiling({ single: fixture.single, list: fixture.list });
  log(`API: ceiling server (bare fastify) on ${ceiling.url}, pid ${ceiling.pid}`);
  watch({ name: 'ceiling', pid: ceiling.pid, serverSide: true });
  const context = {
    gatewayUrl: stack.services.gatewayUrl,
    ceilingUrl: ceiling.url,
    headers: { 'x-api-key': fixture.key, 'content-type': 'application/json' },
    fixture,
  };
  const endpoints = endpointDefinitions.map((define) => define(context));
  const rows = [];
  for (const endpoint of endpoints.filter((candidate) => !endpointFilter || endpointFilter.test(candidate.name))) {
    await analyzeTasksSchema(stack.infra.databaseUrl, `API: before ${endpoint.name}`);
    rows.push(await measureEndpoint(stack, endpoint));
  }
  return {
    rows,
    bodies: { singleBytes: Buffer.byteLength(fixture.single), listBytes: Buffer.byteLength(fixture.list), listTasks: fixture.listLength },
    ceilingRssMb: rssMbOf(ceiling.pid),
  };
}
