// The list stage: GET /v1/projects/:id/tasks of projects of 300 / 5,000 / 50,000 tasks (SCALE_TASKS)
// read by 10 clients at once (SCALE_READERS), each SCALE_READS times: time to the first byte of the
// body, total time, bytes, and the peak RSS of every service while they read. The first answer of
// each size is parsed and checked (a JSON array of exactly that many tasks, in the list shape).
import { performance } from 'node:perf_hooks';
import { Client } from 'undici';
import { onCleanup } from '../lib/cleanup.mjs';
import { cpuMeter } from '../lib/cpu.mjs';
import { log } from '../lib/log.mjs';
import { samplesOf, scrapeMetrics } from '../lib/metrics-text.mjs';
import { percentile, round } from '../lib/numbers.mjs';
import { newProject, scaleWorkspace } from './fixture.mjs';
import { exitsOf, largestPeak, sampleRss } from './rss-peak.mjs';
import { seedProjectTasks } from './seed.mjs';
import { settings, targets } from './settings.mjs';

/** One read: times (ms since the request was sent) of the headers, the first body byte and the end; the body's chunks when `keep`. */
async function readList(client, path, key, keep) {
  const started = performance.now();
  const response = await client.request({
    method: 'GET',
    path,
    headers: { 'x-api-key': key },
    headersTimeout: settings.listTimeoutS * 1000,
    bodyTimeout: settings.listTimeoutS * 1000,
  });
  const headersMs = performance.now() - started;
  let firstByteMs = null;
  let bytes = 0;
  const chunks = [];
  for await (const chunk of response.body) {
    firstByteMs ??= performance.now() - started;
    bytes += chunk.length;
    if (keep) chunks.push(chunk);
  }
  const totalMs = performance.now() - started;
  return { status: response.statusCode, headersMs, firstByteMs: firstByteMs ?? totalMs, totalMs, bytes, chunks: keep ? chunks : null };
}

/** What the first answer must be: an array of `size` list-shape tasks, each task once. */
function checkList(text, size) {
  const tasks = JSON.parse(text);
  if (!Array.isArray(tasks)) return 'not a JSON array';
  if (tasks.length !== size) return `${tasks.length} tasks, expected ${size}`;
  const keys = ['id', 'number', 'name', 'isCompleted', 'description', 'listId', 'assigneeId', 'statusId', 'order', 'createdAt'];
  const bad = tasks.find((task) => keys.some((key) => !(key in task)));
  if (bad) return `a task without ${keys.find((key) => !(key in bad))}`;
  if (new Set(tasks.map((task) => task.id)).size !== size) return 'a task listed twice';
  return null;
}

/** The gateways' `task_list_stream_reads_total` by kind (opened, joined, detached), summed over replicas. */
async function streamReads(stack) {
  const counts = {};
  for (const gateway of stack.services.instances.filter((instance) => instance.name === 'gateway')) {
    for (const { labels, value } of samplesOf(await scrapeMetrics(gateway.opsUrl), 'task_list_stream_reads_total')) counts[labels.kind] = (counts[labels.kind] ?? 0) + value;
  }
  return counts;
}

const since = (before, after) => Object.fromEntries(Object.entries(after).map(([kind, count]) => [kind, count - (before[kind] ?? 0)]));

const summary = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: round(percentile(sorted, 50), 1), max: round(sorted.at(-1) ?? null, 1) };
};

async function measureSize(stack, fixture, size) {
  const project = await newProject(fixture.client, `List of ${size}`);
  const seedStarted = performance.now();
  await seedProjectTasks(fixture.db, {
    workspaceId: fixture.workspaceId, projectId: project.id, sectionId: project.defaultListId, count: size, template: fixture.template, assigneeId: fixture.ownerId,
  });
  const seedSeconds = round((performance.now() - seedStarted) / 1000, 1);
  log(`list: ${size} tasks seeded in ${seedSeconds} s; ${settings.listReaders} readers × ${settings.listReadsPerReader} reads`);
  // One connection per reader, as ten separate clients have (not ten connections of one pool).
  const clients = Array.from({ length: settings.listReaders }, () => new Client(stack.services.gatewayUrl, { pipelining: 1 }));
  onCleanup(() => Promise.all(clients.map((client) => (client.closed || client.destroyed ? undefined : client.close()))));
  const path = `/v1/projects/${project.id}/tasks`;
  const reads = [];
  const errors = [];
  let check = 'not checked (no answer)';
  let kept = null;
  const rss = sampleRss(stack, settings.rssSampleMs);
  const streamedBefore = await streamReads(stack);
  const cpu = cpuMeter();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: settings.listReaders }, async (_, reader) => {
      for (let i = 0; i < settings.listReadsPerReader; i += 1) {
        const keep = reader === 0 && i === 0;
        try {
          const read = await readList(clients[reader], path, fixture.key, keep);
          if (read.status !== 200) errors.push(`HTTP ${read.status}`);
          else reads.push(read);
          // Checked once every read is done: parsing 26 MB here would stall this process, and so
          // the other readers' clocks (it showed as up to 390 ms of their time to first byte).
          if (keep && read.status === 200) kept = read.chunks;
        } catch (error) {
          errors.push(error.code ?? error.message);
        }
      }
    }),
  );
  const wallMs = performance.now() - started;
  const cpuCores = cpu();
  const peaks = rss.stop();
  await Promise.all(clients.map((client) => client.close()));
  // Reads of a large list that shared a StreamTasks call (joined) or opened their own.
  const streamedReads = since(streamedBefore, await streamReads(stack));
  if (kept !== null) check = checkList(Buffer.concat(kept).toString('utf8'), size) ?? 'ok';
  const largest = largestPeak(peaks);
  const row = {
    size,
    seedSeconds,
    reads: reads.length,
    errors: errors.length,
    errorKinds: [...new Set(errors)].slice(0, 5),
    check,
    bytes: reads[0]?.bytes ?? null,
    ttfbMs: summary(reads.map((read) => read.firstByteMs)),
    headersMs: summary(reads.map((read) => read.headersMs)),
    totalMs: summary(reads.map((read) => read.totalMs)),
    wallSeconds: round(wallMs / 1000, 1),
    // Cores each process used while the lists were read (Postgres: all its backends).
    cpuCores,
    streamedReads,
    peakRss: peaks,
    largestPeakRss: largest,
    exited: exitsOf(peaks),
  };
  row.met = {
    ttfb: row.ttfbMs.max !== null && row.ttfbMs.max <= targets.listTtfbMs,
    total: row.totalMs.max !== null && row.totalMs.max <= targets.listTotalMs,
    rss: largest.peakRssMb < targets.rssMb && row.exited.length === 0,
    correct: check === 'ok' && errors.length === 0,
  };
  log(`list ${size}: ttfb p50 ${row.ttfbMs.p50} / max ${row.ttfbMs.max} ms, total p50 ${row.totalMs.p50} / max ${row.totalMs.max} ms, ${row.bytes} bytes, errors ${row.errors}, check ${check}, peak RSS ${largest.peakRssMb} MB (${largest.service}); streamed reads ${JSON.stringify(streamedReads)}; cores ${JSON.stringify(cpuCores)}`);
  return row;
}

/** Every size in ascending order, each skipped (with the reason) once the run's deadline has passed. */
export async function benchLists(stack, db, deadline) {
  log('list: creating the workspace');
  const fixture = { ...(await scaleWorkspace(stack, db, 'Scale lists')), db };
  const rows = [];
  for (const size of [...settings.listSizes].sort((a, b) => a - b)) {
    if (Date.now() > deadline) {
      rows.push({ size, skipped: 'the run\'s deadline (SCALE_DEADLINE_S) passed before this size' });
      log(`list ${size}: skipped (deadline)`);
      continue;
    }
    rows.push(await measureSize(stack, fixture, size));
  }
  return { readers: settings.listReaders, readsPerReader: settings.listReadsPerReader, rows };
}
