// Every environment knob of `npm run bench:scale`, read once (the only reader of process.env in
// bench/scale/). `settings` and `targets` are written into each result file as they are: keep their
// keys stable so results stay comparable. What each figure means: bench/SCALE.md.
const env = process.env;
const num = (name, fallback) => {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(raw)}`);
  return value;
};
const list = (name, fallback) => {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const values = raw.split(',').map((part) => Number(part.trim()));
  if (values.some((value) => !Number.isInteger(value) || value < 1)) throw new Error(`${name} must be positive integers separated by commas, got ${JSON.stringify(raw)}`);
  return values;
};

// In this order: the list's largest size is the likeliest to take a service down, so it goes last.
export const stages = ['db', 'fanout', 'list'];

const only = (env.SCALE_ONLY ?? stages.join(',')).split(',').map((stage) => stage.trim()).filter(Boolean);
for (const stage of only) if (!stages.includes(stage)) throw new Error(`SCALE_ONLY takes ${stages.join(', ')} (comma-separated), got ${JSON.stringify(stage)}`);

export const settings = {
  only,
  /** The whole run's deadline: a stage that would start (or a size that would begin) after it is skipped, with the reason. */
  deadlineS: num('SCALE_DEADLINE_S', 1800),
  /** List stage: project sizes, concurrent readers, reads per reader and size. */
  listSizes: list('SCALE_TASKS', [300, 5000, 50000]),
  listReaders: num('SCALE_READERS', 10),
  listReadsPerReader: num('SCALE_READS', 3),
  /** One list read gives up after this long (counted as an error). */
  listTimeoutS: num('SCALE_LIST_TIMEOUT_S', 60),
  /** DB stage: the big database (tasks across workspaces), the measured workspace's own tasks, requests per measurement. */
  dbTasks: num('SCALE_DB_TASKS', 1_000_000),
  dbWorkspaces: num('SCALE_DB_WORKSPACES', 2000),
  dbOwnTasks: 500,
  dbRequests: num('SCALE_DB_REQUESTS', 2000),
  dbConcurrency: num('SCALE_DB_CONCURRENCY', 4),
  /** Fan-out stage: endpoint counts (one task change each), and how long to wait for every delivery. */
  fanoutEndpoints: list('SCALE_ENDPOINTS', [1, 100, 10000]),
  fanoutWaitS: num('SCALE_FANOUT_WAIT_S', 120),
  /** RSS sampling interval of the services during the list stage. */
  rssSampleMs: 50,
};

/** Every stage at the default sizes: only such a run replaces the reference, bench/results/scale-latest.json. */
export const fullRun =
  stages.every((stage) => only.includes(stage)) &&
  ['SCALE_TASKS', 'SCALE_READERS', 'SCALE_READS', 'SCALE_DB_TASKS', 'SCALE_DB_WORKSPACES', 'SCALE_DB_REQUESTS', 'SCALE_DB_CONCURRENCY', 'SCALE_ENDPOINTS'].every(
    (name) => env[name] === undefined || env[name] === '',
  );

export const targets = {
  listTtfbMs: 50,
  listTotalMs: 2000,
  rssMb: 200,
  bigDbP99Factor: 1.2,
  fanoutSeconds: 10,
  fanoutDeliveriesPerSecond: 1000,
};
