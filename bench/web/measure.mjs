// One page measured: a warm-up (not counted), then N requests one after the other and N more at a
// small concurrency, each with the session cookie. Server time from the app's histogram
// (server-time.mjs), client latency (request sent → body read, on loopback) from this process, and
// the CPU the web and tasks services spent per request.
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { inParallel } from '../lib/api-client.mjs';
import { onCleanup } from '../lib/cleanup.mjs';
import { cpuMeter } from '../lib/cpu.mjs';
import { load, sampleLoad } from '../lib/load.mjs';
import { log } from '../lib/log.mjs';
import { percentile, round } from '../lib/numbers.mjs';
import { settings, targets } from '../lib/settings.mjs';
import { difference, scrape, serverFigures } from './server-time.mjs';

/** A pool of `settings.webConcurrency` connections to the app, with the session cookie. */
export function pageClient(webUrl, cookie) {
  const pool = new Pool(webUrl, { connections: Math.max(1, settings.webConcurrency), pipelining: 1 });
  onCleanup(() => pool.close());
  /** One GET of `page`: its latency in ms, or an error string (not 200, or not the page expected). */
  return async (page) => {
    const started = performance.now();
    const response = await pool.request({ method: 'GET', path: page.path, headers: { cookie }, headersTimeout: 10_000, bodyTimeout: 10_000 });
    const body = await response.body.text();
    const ms = performance.now() - started;
    if (response.statusCode !== 200) return { ms, error: `status ${response.statusCode}` };
    const missing = page.expect.find((text) => !body.includes(text));
    if (missing) return { ms, error: `no "${missing}" in the page` };
    return { ms };
  };
}

/** `count` GETs of `page`, `concurrency` at a time; the run's figures. */
async function run(get, page, opsUrl, count, concurrency, mode) {
  const before = await scrape(opsUrl, page.route);
  const cpu = cpuMeter();
  const started = performance.now();
  const results = await inParallel(count, concurrency, () => get(page));
  const seconds = (performance.now() - started) / 1000;
  const cpuCores = cpu();
  const server = serverFigures(difference(before, await scrape(opsUrl, page.route)), targets.webServerP95Ms);
  const latencies = results.map((result) => result.ms).sort((a, b) => a - b);
  const errors = results.filter((result) => result.error);
  const cpuMsPerRequest = (name) => (cpuCores[name] === null || cpuCores[name] === undefined ? null : round((cpuCores[name] * seconds * 1000) / count, 2));
  const row = {
    page: page.name,
    route: page.route,
    mode,
    concurrency,
    requests: count,
    errors: errors.length,
    firstError: errors[0]?.error ?? null,
    requestsPerSecond: round(count / seconds, 0),
    server,
    client: {
      p50Ms: round(percentile(latencies, 50), 1),
      p95Ms: round(percentile(latencies, 95), 1),
      maxMs: round(latencies.at(-1), 1),
      meanMs: round(latencies.reduce((sum, value) => sum + value, 0) / latencies.length, 2),
    },
    cpuMsPerRequest: { web: cpuMsPerRequest('web'), tasks: cpuMsPerRequest('tasks'), webhooks: cpuMsPerRequest('webhooks') },
    cpuCores,
    loadavgAtEnd: load(),
    // The histogram must have seen exactly this run (nothing else asks for these pages).
    met: errors.length === 0 && server.requests === count && server.p95WithinTarget,
  };
  log(
    `  ${page.name} (${mode}): server p50 ${server.p50Ms} / p95 ${server.p95Ms} / max ≤ ${server.maxMsAtMost} ms (${server.overTarget} over ${targets.webServerP95Ms} ms), ` +
      `client p50 ${row.client.p50Ms} / p95 ${row.client.p95Ms} / max ${row.client.maxMs} ms, ${row.requestsPerSecond} req/s, ` +
      `errors ${row.errors}${row.firstError ? ` (${row.firstError})` : ''}, web CPU ${row.cpuMsPerRequest.web} ms/req; load ${row.loadavgAtEnd[0]}`,
  );
  return row;
}

/** Warm-up, then the sequential and the concurrent run of one page. */
export async function measurePage(get, page, opsUrl) {
  for (let i = 0; i < settings.webWarmup; i += 1) {
    const warm = await get(page);
    if (warm.error) throw new Error(`${page.name} (${page.path}): ${warm.error}`);
  }
  sampleLoad(`web ${page.name} start`);
  const sequential = await run(get, page, opsUrl, settings.webRequests, 1, 'sequential');
  const concurrent = await run(get, page, opsUrl, settings.webRequests, settings.webConcurrency, `concurrency ${settings.webConcurrency}`);
  return [sequential, concurrent];
}
