import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The Accept header Prometheus 3 scrapes with (its default scrape protocols, OpenMetrics first). */
export const prometheusScrapeAccept =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,' +
  'text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2';

export interface Exemplar {
  /** The sample's series, e.g. `http_request_duration_seconds_bucket`. */
  metric: string;
  labels: Record<string, string>;
  exemplarLabels: Record<string, string>;
  value: number;
}

const labelPattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
const labelsOf = (text: string): Record<string, string> => Object.fromEntries([...text.matchAll(labelPattern)].map((match) => [match[1]!, match[2]!]));

/** `name{labels} value [# {exemplar labels} value [timestamp]]` of the OpenMetrics text format. */
const samplePattern =
  /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[^"}]|"(?:[^"\\]|\\.)*")*)\})? (-?[0-9.e+-]+|[+-]Inf|NaN)(?: # \{((?:[^"}]|"(?:[^"\\]|\\.)*")*)\} (-?[0-9.e+-]+)(?: ([0-9.]+))?)?$/;

/**
 * Checks the shape of an OpenMetrics exposition (each line a `# HELP`/`# TYPE` comment or a sample,
 * exemplars only on histogram buckets and counters, `# EOF` last) and returns its exemplars; throws on
 * the first line that does not fit.
 */
export function parseOpenMetrics(body: string): Exemplar[] {
  if (!body.endsWith('\n# EOF\n')) throw new Error('an OpenMetrics exposition ends with "# EOF"');
  const lines = body.slice(0, -'# EOF\n'.length).split('\n').slice(0, -1);
  const types = new Map<string, string>();
  const exemplars: Exemplar[] = [];
  for (const line of lines) {
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|info|stateset|gaugehistogram|unknown)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* /.test(line)) continue;
    const sample = samplePattern.exec(line);
    if (!sample) throw new Error(`not an OpenMetrics line: ${line}`);
    if (sample[4] === undefined) continue;
    const family = sample[1]!.replace(/_(bucket|total)$/, '');
    const familyType = types.get(family);
    if (!((familyType === 'histogram' && sample[1]!.endsWith('_bucket')) || (familyType === 'counter' && sample[1]!.endsWith('_total')))) {
      throw new Error(`an exemplar on a sample that cannot carry one: ${line}`);
    }
    exemplars.push({ metric: sample[1]!, labels: labelsOf(sample[2] ?? ''), exemplarLabels: labelsOf(sample[4]), value: Number(sample[5]) });
  }
  return exemplars;
}

const promtool = (): string => process.env.PROMTOOL ?? 'promtool';

/** Runs `promtool check metrics` with the exposition on stdin (the Prometheus text format's parser and lint). */
export function promtoolCheckMetrics(exposition: string): Promise<{ code: number | null; output: string }> {
  return runPromtool(['check', 'metrics'], exposition);
}

/**
 * Reads an OpenMetrics exposition with Prometheus' own OpenMetrics parser, exemplars included:
 * `promtool tsdb create-blocks-from openmetrics` (the backfill importer, which needs a timestamp on
 * every sample, so one is added before each sample's exemplar). `ok` is false with its error.
 */
export async function promtoolParseOpenMetrics(body: string): Promise<{ ok: boolean; output: string }> {
  const stamped = body
    .split('\n')
    .map((line) => {
      if (line === '' || line.startsWith('#')) return line;
      const exemplarAt = line.indexOf(' # {');
      return exemplarAt < 0 ? `${line} 1700000000` : `${line.slice(0, exemplarAt)} 1700000000${line.slice(exemplarAt)}`;
    })
    .join('\n');
  const directory = await mkdtemp(path.join(tmpdir(), 'tws-openmetrics-'));
  try {
    await writeFile(path.join(directory, 'exposition.om'), stamped);
    const { code, output } = await runPromtool(['tsdb', 'create-blocks-from', 'openmetrics', path.join(directory, 'exposition.om'), path.join(directory, 'blocks')], '');
    // The importer prints its error and still exits 0: success is the table of the block it wrote.
    return { ok: code === 0 && /NUM SAMPLES/.test(output) && !/error|expected|invalid/i.test(output), output };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

function runPromtool(args: string[], stdin: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(promtool(), args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: output.trim() }));
    child.stdin.end(stdin);
  });
}
