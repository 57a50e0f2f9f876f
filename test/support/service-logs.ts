import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { inject } from 'vitest';
import { pollUntil } from './fixtures.js';

/** One JSON log line of a service (pino: `level`, `service`, `msg`, `reqId`, …). */
export type LogLine = Record<string, unknown>;

/**
 * The JSON lines a service of the test stack has logged so far: devstack writes each process's
 * stdout and stderr to `<logDir>/<name>.log` (`tasks`, `gateway`, `webhooks`, …; `tasks-1` for a
 * second replica). Lines that are not JSON (a stack trace on stderr) are skipped.
 */
export async function serviceLogLines(name: string): Promise<LogLine[]> {
  const text = await readFile(path.join(inject('stack').logDir, `${name}.log`), 'utf8').catch(() => '');
  const lines: LogLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      // a line still being written
    }
  }
  return lines;
}

/** The service's log lines matching `match`, waiting (up to 10 s) for at least one. */
export async function waitForLogLines(name: string, match: (line: LogLine) => boolean): Promise<LogLine[]> {
  const lines = await pollUntil(
    async () => (await serviceLogLines(name)).filter(match),
    (found) => found.length > 0,
    { timeoutMs: 10_000, intervalMs: 100 },
  );
  return lines;
}
