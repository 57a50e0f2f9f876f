import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace } from '../support/admin.js';
import { createProject, createTask, keyOf, pollUntil } from '../support/fixtures.js';

/**
 * The metrics every service exposes are what Prometheus, the alerts (deploy/prometheus/alerts.yaml)
 * and the dashboard (deploy/grafana/task-workspace.json) rely on: each /metrics passes
 * `promtool check metrics` (Prometheus' own parser and naming lint: `_total` counters, base units,
 * HELP on everything), carries the `service` label, never uses an id as a label value, and exposes
 * every metric the alerts and the dashboard query.
 */
const stack = inject('stack');
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const promtool = process.env.PROMTOOL ?? 'promtool';
const serviceNames = ['gateway', 'tasks', 'attachments', 'webhooks'] as const;
type ServiceName = (typeof serviceNames)[number];

const metricsUrl = (name: ServiceName): string => {
  const base = name === 'gateway' ? stack.gatewayUrl : stack.services.find((service) => service.name === name)?.opsUrl;
  if (!base) throw new Error(`the test stack has no ${name} service`);
  return `${base}/metrics`;
};

async function scrape(name: ServiceName): Promise<string> {
  const response = await fetch(metricsUrl(name));
  expect(response.status, `GET ${metricsUrl(name)}`).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** Runs `promtool check metrics` with the exposition on stdin. */
function checkMetrics(exposition: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(promtool, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: output.trim() }));
    child.stdin.end(exposition);
  });
}

/** Metric families by name with their type, from the `# TYPE` lines. */
function families(exposition: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) found.set(match[1]!, match[2]!);
  return found;
}

/** Sample lines (not comments, not blank). */
const samples = (exposition: string): string[] => exposition.split('\n').filter((line) => line !== '' && !line.startsWith('#'));

/**
 * `metric{…}` selectors in PromQL expressions, with the service they name (if any). The alerts and
 * the dashboard always write selectors with braces, so functions and keywords never match.
 */
function selectors(expressions: string[]): Array<{ metric: string; service?: string; expression: string }> {
  const found: Array<{ metric: string; service?: string; expression: string }> = [];
  for (const expression of expressions) {
    for (const match of expression.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g)) {
      const service = /(?:^|[\s,])service="([^"]+)"/.exec(match[2]!)?.[1];
      found.push({ metric: match[1]!, ...(service ? { service } : {}), expression });
    }
  }
  return found;
}

/** The `expr:` blocks of a Prometheus rules file (block scalars or one-liners). */
function ruleExpressions(file: string): string[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const expressions: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const match = /^(\s*)expr:\s*(.*)$/.exec(lines[index]!);
    if (!match) continue;
    if (!['|', '|-', '>', '>-'].includes(match[2]!.trim())) {
      expressions.push(match[2]!);
      continue;
    }
    const block: string[] = [];
    while (index + 1 < lines.length && (lines[index + 1]!.trim() === '' || /^\s*/.exec(lines[index + 1]!)![0].length > match[1]!.length)) {
      block.push(lines[++index]!);
    }
    expressions.push(block.join('\n'));
  }
  return expressions;
}

/** Every `expr` of every panel target of the Grafana dashboard. */
function dashboardExpressions(file: string): string[] {
  const expressions: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'expr' && typeof value === 'string') expressions.push(value);
        else visit(value);
      }
    }
  };
  visit(JSON.parse(readFileSync(file, 'utf8')));
  return expressions;
}

describe('Prometheus metrics of every service', () => {
  const expositions = new Map<ServiceName, string>();

  beforeAll(async () => {
    const version = spawnSync(promtool, ['--version'], { encoding: 'utf8' });
    if (version.error || version.status !== 0) {
      throw new Error(
        `promtool is not installed (${version.error?.message ?? version.stderr}): run scripts/ci/ensure-promtool.sh ` +
          `(it installs Debian's prometheus package), or set PROMTOOL to its path`,
      );
    }
    // Some traffic first, so labelled series exist: a matched route, an unmatched one, an id in a path.
    for (const url of [
      `${stack.gatewayUrl}/healthz`,
      `${stack.gatewayUrl}/v1/no-such-route`,
      `${stack.gatewayUrl}/v1/tasks/6f1c3e0a-9a4b-4a39-9d3e-2f9b7c1d5e42`,
      `${stack.gatewayUrl}/openapi.json`,
    ]) {
      await (await fetch(url)).arrayBuffer();
    }
    for (const name of serviceNames) expositions.set(name, await scrape(name));
  });

  it.each(serviceNames)('%s: /metrics passes promtool check metrics', async (name) => {
    const result = await checkMetrics(expositions.get(name)!);
    expect(result.output, `promtool check metrics on ${metricsUrl(name)}`).toBe('');
    expect(result.code).toBe(0);
  });

  it.each(serviceNames)('%s: every series carries its service label; default process metrics are there', (name) => {
    const text = expositions.get(name)!;
    const unlabelled = samples(text).filter((line) => !line.includes(`service="${name}"`));
    expect(unlabelled).toEqual([]);
    const exposed = families(text);
    for (const family of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(exposed.has(family), `${name} exposes ${family}`).toBe(true);
    }
  });

  it('label values are templates and codes, never ids or raw URLs', () => {
    const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
    for (const name of serviceNames) {
      const offending = samples(expositions.get(name)!).filter((line) => uuid.test(line) || /="https?:\/\//.test(line));
      expect(offending, `${name} label values`).toEqual([]);
    }
    const routes = new Set(
      [...expositions.get('gateway')!.matchAll(/^http_request_duration_seconds_count\{[^}]*route="([^"]*)"/gm)].map((match) => match[1]),
    );
    expect(routes.has('/healthz')).toBe(true);
  });

  it('platform metrics: build info everywhere, pool gauges per pool, Kafka produce where services produce, S3 calls in attachments', () => {
    const version = (JSON.parse(readFileSync(path.join(repoRoot, 'services/tasks/package.json'), 'utf8')) as { version: string }).version;
    for (const name of serviceNames) {
      const text = expositions.get(name)!;
      expect(text, `${name} build info`).toMatch(new RegExp(`^task_workspace_build_info\\{version="[^"]+",revision="[^"]+",service="${name}"\\} 1$`, 'm'));
    }
    expect(expositions.get('tasks')).toContain(`task_workspace_build_info{version="${version}",`);
    for (const name of ['tasks', 'attachments', 'webhooks'] as const) {
      const text = expositions.get(name)!;
      for (const gauge of ['pg_pool_connections', 'pg_pool_idle_connections', 'pg_pool_waiting_clients']) {
        expect(text, `${name} ${gauge}`).toMatch(new RegExp(`^${gauge}\\{pool="${name}",service="${name}"\\} \\d+$`, 'm'));
      }
      expect(text).toMatch(new RegExp(`^pg_pool_max_connections\\{pool="${name}",service="${name}"\\} [1-9]\\d*$`, 'm'));
    }
    for (const name of ['tasks', 'webhooks'] as const) {
      expect(families(expositions.get(name)!).get('kafka_produce_duration_seconds'), `${name} produce latency`).toBe('histogram');
      expect(families(expositions.get(name)!).get('kafka_produce_errors_total'), `${name} produce errors`).toBe('counter');
    }
    // The attachments service checks its bucket at start: at least that call is timed.
    const headBucket = samples(expositions.get('attachments')!).filter(
      (line) => line.startsWith('s3_request_duration_seconds_count{') && line.includes('operation="HeadBucket"') && line.includes('outcome="ok"'),
    );
    expect(headBucket.map((line) => Number(line.split(' ').at(-1)))).toEqual([expect.any(Number)]);
    expect(Number(headBucket[0]!.split(' ').at(-1))).toBeGreaterThan(0);
    expect(families(expositions.get('attachments')!).get('s3_request_errors_total')).toBe('counter');
  });

  it('a task change is produced to Kafka by the relay and timed: kafka_produce_duration_seconds{topic="task-events.v1",outcome="ok"} grows', async () => {
    const producedOk = (text: string): number =>
      samples(text)
        .filter((line) => line.startsWith('kafka_produce_duration_seconds_count{') && line.includes('topic="task-events.v1"') && line.includes('outcome="ok"'))
        .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    const before = producedOk(await scrape('tasks'));
    const key = keyOf(await createWorkspace());
    const project = await createProject(key);
    await createTask(key, { projectId: project.id, listId: project.defaultListId });
    const after = await pollUntil(async () => producedOk(await scrape('tasks')), (count) => count > before, { timeoutMs: 15_000, intervalMs: 200 });
    expect(after).toBeGreaterThan(before);
  });

  it('every metric the alerts and the dashboard query is exposed by the service they name', () => {
    const byService = new Map([...expositions].map(([name, text]) => [name as string, families(text)]));
    const isExposed = (metric: string, exposed: Map<string, string>): boolean => {
      if (exposed.has(metric)) return true;
      const base = metric.replace(/_(bucket|count|sum)$/, '');
      return base !== metric && ['histogram', 'summary'].includes(exposed.get(base) ?? '');
    };
    const queried = selectors([
      ...ruleExpressions(path.join(repoRoot, 'deploy/prometheus/alerts.yaml')),
      ...dashboardExpressions(path.join(repoRoot, 'deploy/grafana/task-workspace.json')),
    ]);
    expect(queried.length).toBeGreaterThan(10);
    const missing = queried
      // `up` is Prometheus' own series about each scrape, never in an exposition.
      .filter(({ metric }) => metric !== 'up')
      .filter(({ metric, service }) =>
        service ? !isExposed(metric, byService.get(service) ?? new Map()) : ![...byService.values()].some((exposed) => isExposed(metric, exposed)),
      )
      .map(({ metric, service }) => `${metric}${service ? ` (service="${service}")` : ''}`);
    expect([...new Set(missing)]).toEqual([]);
  });
});
