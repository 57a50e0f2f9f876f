#!/usr/bin/env node
// What goes into a service's image, worked out from the built repository. docker/Dockerfile runs it
// in its build stage (scripts/images/build.sh builds the images with buildah; scripts/ci/images.sh
// checks them).
//
//   node docker/image.mjs roots SERVICE          the workspaces to compile (tsc -b), one a line: the
//                                                service and the operators' tools its image ships
//   node docker/image.mjs assemble SERVICE OUT   OUT/workspaces: the workspaces the image needs, one a
//                                                line (for npm ci --omit=dev --workspace=…);
//                                                OUT/app: the image's /app less node_modules
//
// The workspaces an image needs are its roots plus every workspace they import, found in their
// compiled code (`@tws/<name>` in dist/**/*.js) and their package.json dependencies, transitively:
// a new packages/* needs no edit here or in the Dockerfile. Each ships its package.json and what it
// builds or reads at run time (dist/, migrations/, options.json …): its directory less the sources,
// TypeScript settings, build info and docs. proto/ ships too (@tws/proto-types reads it at run time).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Operators' tools a service's image ships (`kubectl exec deploy/<release>-tasks -- node packages/admin-cli/dist/cli.js …`), when the repository has them. */
const toolsOf = { tasks: ['packages/admin-cli'] };

/** Left out of every workspace's copy: at its top, sources, TypeScript settings, docs and tests; anywhere, build info and compiled tests. */
const leftOutAtTop = [/^src$/, /^tsconfig(\..+)?\.json$/, /\.md$/i, /^node_modules$/, /^test$/];
const leftOutAnywhere = [/\.tsbuildinfo$/, /\.test\.(js|d\.ts)(\.map)?$/];

const readJson = (file) => JSON.parse(readFileSync(path.join(root, file), 'utf8'));
const isWorkspace = (dir) => existsSync(path.join(root, dir, 'package.json'));

/** Workspace directory by package name, from the root package.json's `workspaces` (`dir/*` patterns). */
function workspaces() {
  const byName = new Map();
  for (const pattern of readJson('package.json').workspaces) {
    const parent = pattern.replace(/\/\*$/, '');
    const dirs = pattern.endsWith('/*') ? readdirSync(path.join(root, parent)).map((name) => `${parent}/${name}`) : [pattern];
    for (const dir of dirs.filter(isWorkspace)) byName.set(readJson(`${dir}/package.json`).name, dir);
  }
  return byName;
}

function roots(service) {
  const services = [...workspaces().values()].filter((dir) => dir.startsWith('services/')).map((dir) => dir.slice('services/'.length));
  if (!services.includes(service)) {
    throw new Error(`SERVICE must be one of ${services.join(', ')} (got ${JSON.stringify(service ?? '')})`);
  }
  return [`services/${service}`, ...(toolsOf[service] ?? []).filter(isWorkspace)];
}

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(full);
    else yield full;
  }
}

/** The workspace names a workspace imports at run time: its dependencies and `@tws/…` specifiers in its dist/. */
function importsOf(dir, byName) {
  const manifest = readJson(`${dir}/package.json`);
  const names = new Set(Object.keys(manifest.dependencies ?? {}).filter((name) => byName.has(name)));
  const dist = path.join(root, dir, 'dist');
  if (!existsSync(dist)) throw new Error(`${dir}/dist does not exist: build ${dir} first (tsc -b ${dir})`);
  for (const file of files(dist)) {
    if (!file.endsWith('.js')) continue;
    for (const match of readFileSync(file, 'utf8').matchAll(/['"](@tws\/[a-z0-9._-]+)(?:\/[^'"]*)?['"]/g)) {
      if (byName.has(match[1])) names.add(match[1]);
    }
  }
  return names;
}

/** The roots and every workspace they import, transitively, sorted. */
function needed(service) {
  const byName = workspaces();
  const seen = new Set(roots(service));
  const queue = [...seen];
  while (queue.length > 0) {
    for (const name of importsOf(queue.shift(), byName)) {
      const dir = byName.get(name);
      if (!seen.has(dir)) {
        seen.add(dir);
        queue.push(dir);
      }
    }
  }
  return [...seen].sort();
}

function assemble(service, out) {
  const dirs = needed(service);
  rmSync(out, { recursive: true, force: true });
  const app = path.join(out, 'app');
  mkdirSync(app, { recursive: true });
  writeFileSync(path.join(out, 'workspaces'), dirs.map((dir) => `${dir}\n`).join(''));
  cpSync(path.join(root, 'package.json'), path.join(app, 'package.json'));
  cpSync(path.join(root, 'proto'), path.join(app, 'proto'), { recursive: true });
  for (const dir of dirs) {
    cpSync(path.join(root, dir), path.join(app, dir), {
      recursive: true,
      filter: (source) => {
        const name = path.basename(source);
        const atTop = path.dirname(source) === path.join(root, dir);
        return !leftOutAnywhere.some((pattern) => pattern.test(name)) && !(atTop && leftOutAtTop.some((pattern) => pattern.test(name)));
      },
    });
  }
  const size = [...files(app)].reduce((total, file) => total + statSync(file).size, 0);
  process.stderr.write(`image of ${service}: ${dirs.join(', ')} (${(size / 1e6).toFixed(1)} MB without node_modules)\n`);
}

const [command, service, out] = process.argv.slice(2);
try {
  if (command === 'roots' && process.argv.length === 4) {
    process.stdout.write(roots(service).map((dir) => `${dir}\n`).join(''));
  } else if (command === 'assemble' && out) {
    assemble(service, path.resolve(out));
  } else {
    throw new Error('usage: node docker/image.mjs roots SERVICE | assemble SERVICE OUT');
  }
} catch (error) {
  process.stderr.write(`docker/image.mjs: ${error.message}\n`);
  process.exit(1);
}
