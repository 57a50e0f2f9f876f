// The ceiling every API row is compared with: `ceiling-server.mjs`, a bare fastify server in its own
// process answering the same bytes from memory (see bench/README.md).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { onCleanup } from '../lib/cleanup.mjs';

const server = fileURLToPath(new URL('./ceiling-server.mjs', import.meta.url));

/** Starts the ceiling with `bodies` ({ single, list }: the exact response bodies of the stack); its URL and pid. */
export async function startCeiling(bodies) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tws-bench-ceiling-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'bodies.json');
  writeFileSync(file, JSON.stringify(bodies));
  const child = spawn(process.execPath, [server, file], { stdio: ['ignore', 'pipe', 'inherit'] });
  onCleanup(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
  const port = await new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      const line = buffer.split('\n')[0];
      if (buffer.includes('\n')) resolve(JSON.parse(line).port);
    });
    child.once('exit', (code) => reject(new Error(`ceiling server exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid };
}
