// Generates TypeScript types for every proto under proto/ with the same options the runtime loader uses
// (packages/proto-types/options.json), so generated types and loaded objects always agree.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const protoRoot = path.join(root, 'proto');
const outDir = path.join(root, 'packages/proto-types/src/generated');
const options = JSON.parse(readFileSync(path.join(root, 'packages/proto-types/options.json'), 'utf8'));

const protoFiles = (function walk(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return walk(full);
    return entry.endsWith('.proto') ? [path.relative(protoRoot, full)] : [];
  });
})(protoRoot).sort();

rmSync(outDir, { recursive: true, force: true });
const flags = [
  '--grpcLib=@grpc/grpc-js',
  `--outDir=${outDir}`,
  `--includeDirs=${protoRoot}`,
  `--longs=${options.longs}`,
  `--enums=${options.enums}`,
  ...(options.keepCase ? ['--keepCase'] : []),
  ...(options.defaults ? ['--defaults'] : []),
  ...(options.oneofs ? ['--oneofs'] : []),
];
execFileSync(path.join(root, 'node_modules/.bin/proto-loader-gen-types'), [...flags, ...protoFiles], {
  cwd: protoRoot,
  stdio: ['ignore', 'ignore', 'inherit'],
});
// The generator writes extension-less relative imports; ESM (NodeNext) resolution needs `.js`.
for (const file of (function walk(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
})(outDir)) {
  const source = readFileSync(file, 'utf8');
  writeFileSync(file, source.replace(/from '(\.{1,2}\/[^']+)'/g, "from '$1.js'"));
}
console.log(`gen:proto: ${protoFiles.length} proto files -> ${path.relative(root, outDir)}`);
