// Summarizes a V8 .cpuprofile (from `--cpu-prof`): top functions by self time and by total time.
// Usage: node bench/lib/profile-summary.mjs <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const selfTicks = new Map();
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i + 1] ?? 0;
  selfTicks.set(id, (selfTicks.get(id) ?? 0) + dt);
});
const label = (node) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${url.replace(/^file:\/\/\/work\/main\//, '').replace(/.*node_modules\//, 'nm/')}:${lineNumber + 1}` : '';
  return `${functionName || '(anonymous)'} ${where}`.trim();
};
const self = new Map();
const total = new Map();
let all = 0;
for (const [id, us] of selfTicks) {
  all += us;
  const node = nodes.get(id);
  self.set(label(node), (self.get(label(node)) ?? 0) + us);
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const name = label(nodes.get(cur));
    if (seen.has(name)) continue;
    seen.add(name);
    total.set(name, (total.get(name) ?? 0) + us);
  }
}
const show = (title, map) => {
  console.log(`\n${title} (of ${(all / 1000).toFixed(0)} ms sampled)`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * us) / all).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`);
  }
};
show('self time', self);
show('total time', total);
