// `npm run bench:scale`: how the costs grow with the data (issue 21). Starts the stack as `npm run
// bench` does (bench/lib/stack.mjs: loopback, limits off, the TLS receiver), seeds sizes straight
// into Postgres (seed.mjs), and measures, in this order:
//   db      GET/PATCH task p50/p99 on the database as found, then with 1,000,000 more tasks (db.mjs)
//   fanout  one task change to 1 / 100 / 10,000 endpoints (fanout.mjs)
//   list    the task list of 300 / 5,000 / 50,000 tasks read by 10 clients at once (list.mjs)
// then prints a table per stage (each figure beside its target) and writes
// bench/results/scale-<timestamp>.json and bench/results/scale-latest.json. bench/SCALE.md explains every figure.
//
// Environment knobs (all optional; read in settings.mjs):
//   SCALE_ONLY=db,fanout,list   the stages to run          SCALE_DEADLINE_S=1800  the whole run's deadline
//   SCALE_TASKS=300,5000,50000  list sizes                 SCALE_READERS=10, SCALE_READS=3  readers, reads each
//   SCALE_DB_TASKS=1000000      big database's tasks       SCALE_DB_WORKSPACES=2000  across this many workspaces
//   SCALE_DB_REQUESTS=2000      GETs and PATCHes measured  SCALE_DB_CONCURRENCY=4  at once
//   SCALE_ENDPOINTS=1,100,10000 fan-out endpoint counts    SCALE_FANOUT_WAIT_S=120  wait for all deliveries
//   (BENCH_EXTRA_ENV, BENCH_NODE_OPTIONS and BENCH_LOG_LEVEL change the services' environment as in `npm run bench`.)
// `node bench/scale/run.mjs --dry-run` loads every module, prints the settings and stops.
import os from 'node:os';
import { cleanup, trapSignals } from '../lib/cleanup.mjs';
import { loadSamples, sampleLoad } from '../lib/load.mjs';
import { log, t0 } from '../lib/log.mjs';
import { startReceiverSide } from '../lib/receiver.mjs';
import { servicesExtraEnv } from '../lib/settings.mjs';
import { startBenchStack } from '../lib/stack.mjs';
import { benchBigDatabase } from './db.mjs';
import { benchFanOut } from './fanout.mjs';
import { benchLists } from './list.mjs';
import { scaleReport, writeScaleResults } from './report.mjs';
import { tasksDb } from './seed.mjs';
import { settings, stages, targets } from './settings.mjs';

const order = stages;

async function main() {
  const deadline = t0 + settings.deadlineS * 1000;
  sampleLoad('start');
  const receiverSide = await startReceiverSide();
  const stack = await startBenchStack(receiverSide);
  const db = await tasksDb(stack);
  const results = {
    startedAt: new Date(t0).toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, totalMemMb: Math.round(os.totalmem() / 2 ** 20), node: process.version },
    settings,
    servicesExtraEnv,
    targets,
    stages: {},
  };
  const run = {
    db: () => benchBigDatabase(stack, db, deadline),
    list: () => benchLists(stack, db, deadline),
    fanout: () => benchFanOut(stack, db, receiverSide.receiver, deadline),
  };
  for (const stage of order.filter((name) => settings.only.includes(name))) {
    if (Date.now() > deadline) {
      results.stages[stage] = { skipped: `the run's deadline (SCALE_DEADLINE_S=${settings.deadlineS}) passed before it began` };
      continue;
    }
    sampleLoad(`${stage} start`);
    try {
      results.stages[stage] = await run[stage]();
    } catch (error) {
      // One stage failing (a service that died under a size) does not lose the others' figures.
      log(`${stage} failed: ${error.stack ?? error}`);
      results.stages[stage] = { failed: String(error.message ?? error) };
    }
  }
  sampleLoad('end');
  results.loadSamples = loadSamples;
  results.finishedAt = new Date().toISOString();
  results.logDir = stack.logDir;
  process.stdout.write(`\n${scaleReport(results)}\n`);
  writeScaleResults(results);
}

log(`settings ${JSON.stringify(settings)}`);
if (!process.argv.includes('--dry-run')) {
  trapSignals();
  try {
    await main();
  } catch (error) {
    log(`failed: ${error.stack ?? error}`);
    process.exitCode = 1;
  } finally {
    log('stopping the stack');
    await cleanup();
  }
}
