import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * runBackend in a real process: SIGTERM while start-up still waits (the webhooks service on an
 * unreachable Kafka) stops what has started and exits 0, like a shutdown once serving; a start-up
 * that fails by itself still exits 1.
 */

const commonDist = pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js')).href;
const dir = mkdtempSync(path.join(os.tmpdir(), 'tws-backend-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A backend whose start() waits for ever (or fails), with one worker and one resource that log their stop. */
function script(start: 'hang' | 'fail'): string {
  const file = path.join(dir, `backend-${start}.mjs`);
  writeFileSync(
    file,
    `import { runBackend } from ${JSON.stringify(commonDist)};
const config = () => ({ LOG_LEVEL: 'info', HOST: '127.0.0.1', GRPC_PORT: 0, OPS_PORT: 0 });
await runBackend('test-backend', config, () => ({
  grpc: [],
  readiness: [],
  start: ${start === 'hang' ? "() => { console.log(JSON.stringify({ msg: 'starting' })); return new Promise(() => setInterval(() => {}, 1000)); }" : "async () => { throw new Error('broker unreachable'); }"},
  workers: [{ name: 'consumer', run: async () => console.log(JSON.stringify({ msg: 'consumer stopped' })) }],
  resources: [{ name: 'pool', run: async () => console.log(JSON.stringify({ msg: 'pool closed' })) }],
}));
`,
  );
  return file;
}

function run(file: string, onLine: (line: string, send: (signal: NodeJS.Signals) => void) => void): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of chunk.toString().split('\n')) if (line) onLine(line, (signal) => child.kill(signal));
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('runBackend', () => {
  it('SIGTERM during a start-up that waits: stops the workers and resources and exits 0', async () => {
    const { code, output } = await run(script('hang'), (line, send) => {
      if (line.includes('"starting"')) send('SIGTERM');
    });
    expect(code, output).toBe(0);
    expect(output).toContain('consumer stopped');
    expect(output).toContain('pool closed');
    expect(output).toContain('shutdown complete');
  });

  it('a start-up that fails by itself exits 1 with the reason', async () => {
    const { code, output } = await run(script('fail'), () => undefined);
    expect(code).toBe(1);
    expect(output).toContain('broker unreachable');
  });
});
