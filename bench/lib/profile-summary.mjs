// Summarizes a V8 .cpuprofile (from `--cpu-prof`): where the busy time went, optionally within a window
// of the profile (a bench profile spans the whole run: start-up, fixtures, every row).
//
// Usage: node bench/lib/profile-summary.mjs <file.cpuprofile> [top=25] [options]
//   --timeline          busy and GC share of each second of the profile (to find a row's window)
//   --from <s>          only samples from this many seconds after the profile began
//   --to <s>            … and up to this many seconds
//   --packages          self time by package (node_modules package, workspace file, node: module)
//   --tree              the call tree top-down, same-named siblings merged
//   --min <percent>     with --tree: leave out nodes under this share of the busy time (1)
// Without --timeline, --packages or --tree: top functions by self time and by total time.
// Percentages are of the busy time in the window: the `(idle)` samples are left out.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const usage = 'usage: node bench/lib/profile-summary.mjs <file.cpuprofile> [top=25] [--timeline] [--from s] [--to s] [--packages] [--tree [--min %]]';
function usageError(message) {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      timeline: { type: 'boolean' },
      from: { type: 'string' },
      to: { type: 'string' },
      packages: { type: 'boolean' },
      tree: { type: 'boolean' },
      min: { type: 'string' },
    },
  });
} catch (error) {
  usageError(error.message);
}
const { values: options, positionals } = parsed;
const [file, topArg] = positionals;
if (!file) usageError('no profile named');

/** A number argument (a count, seconds or a percent), or the default; anything else is a usage error. */
function numberArgument(name, text, fallback) {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0) usageError(`${name} must be a number ≥ 0, got ${JSON.stringify(text)}`);
  return value;
}
const top = numberArgument('top', topArg, 25);
const treeMinPercent = numberArgument('--min', options.min, 1);
const fromUs = numberArgument('--from', options.from, 0) * 1e6;
const toUs = numberArgument('--to', options.to, Infinity) * 1e6;

const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
// Which service this is (the files named pid only): the workspace service most of its frames come from.
const serviceFrames = new Map();
for (const node of profile.nodes) {
  const service = /services\/([^/]+)\/dist\//.exec(node.callFrame.url)?.[1];
  if (service) serviceFrames.set(service, (serviceFrames.get(service) ?? 0) + 1);
}
const service = [...serviceFrames].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'unknown';
console.log(`${file}: service ${service}`);
const isIdle = (id) => nodes.get(id).callFrame.functionName === '(idle)';

// Each sample's time is the gap to the next one; its moment is the running sum of the gaps before it.
const selfTicks = new Map();
const seconds = new Map();
let clock = 0;
profile.samples.forEach((id, i) => {
  clock += profile.timeDeltas[i] ?? 0;
  const us = profile.timeDeltas[i + 1] ?? 0;
  if (options.timeline) {
    const at = Math.floor(clock / 1e6);
    const second = seconds.get(at) ?? { busy: 0, gc: 0, all: 0 };
    const { functionName } = nodes.get(id).callFrame;
    second.all += us;
    if (functionName !== '(idle)') second.busy += us;
    if (functionName === '(garbage collector)') second.gc += us;
    seconds.set(at, second);
  }
  if (clock < fromUs || clock > toUs || isIdle(id)) return;
  selfTicks.set(id, (selfTicks.get(id) ?? 0) + us);
});
let busy = 0;
for (const us of selfTicks.values()) busy += us;
const percent = (us) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
const milliseconds = (us) => `${(us / 1000).toFixed(0).padStart(7)} ms`;

const label = (node) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${url.replace(/^file:\/\/\/work\/main\//, '').replace(/.*node_modules\//, 'nm/')}:${lineNumber + 1}` : '';
  return `${functionName || '(anonymous)'} ${where}`.trim();
};

/** node_modules package, workspace file (services/x/…, packages/x/…), node: module, or the V8 pseudo-frame. */
function packageOf(node) {
  const { url, functionName } = node.callFrame;
  if (!url) return functionName.startsWith('(') ? functionName : `native ${functionName}`;
  const dependency = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1];
  const workspace = /((services|packages)\/[^/]+)\/dist\/(.*)/.exec(url);
  if (workspace) return `${workspace[1]}/${workspace[3]}`;
  if (url.startsWith('node:')) return url.replace(/^node:internal\//, 'node:').split('/').slice(0, 2).join('/');
  return url;
}

function show(title, map, limit = top) {
  console.log(`\n${title} (of ${(busy / 1000).toFixed(0)} ms busy)`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, limit)) console.log(`${percent(us)}  ${milliseconds(us)}  ${name}`);
}

function printTimeline() {
  console.log('second  busy   GC');
  for (const [second, { busy: b, gc, all }] of [...seconds].sort((x, y) => x[0] - y[0])) {
    const share = (us) => `${((100 * us) / Math.max(all, 1)).toFixed(0).padStart(3)}%`;
    console.log(`${String(second).padStart(6)}  ${share(b)}  ${share(gc)}`);
  }
}

function printTree() {
  // A node's time with its callees': each sampled node's self time added up its parent chain (no recursion).
  const inclusive = new Map();
  for (const [id, us] of selfTicks) for (let current = id; current !== undefined; current = parent.get(current)) inclusive.set(current, (inclusive.get(current) ?? 0) + us);
  const root = profile.nodes[0].id;
  const minUs = (treeMinPercent / 100) * busy;
  console.log(`call tree (of ${(busy / 1000).toFixed(0)} ms busy; nodes under ${treeMinPercent}% left out)`);
  // Iterative walk: same-named siblings are merged so that one call site reads as one line.
  const pending = [{ ids: nodes.get(root).children ?? [], depth: 0 }];
  while (pending.length > 0) {
    const { ids, depth, line } = pending.pop();
    if (line) console.log(line);
    if (!ids) continue;
    const groups = new Map();
    for (const id of ids) {
      const name = label(nodes.get(id));
      const group = groups.get(name) ?? { us: 0, children: [] };
      group.us += inclusive.get(id) ?? 0;
      group.children.push(...(nodes.get(id).children ?? []));
      groups.set(name, group);
    }
    const shown = [...groups].filter(([, group]) => group.us >= minUs).sort((a, b) => b[1].us - a[1].us);
    // Pushed in reverse so the largest is printed first, each followed by its own subtree.
    for (const [name, group] of shown.reverse()) {
      pending.push({ ids: group.children, depth: depth + 1 });
      pending.push({ line: `${'  '.repeat(depth)}${percent(group.us)} ${name}` });
    }
  }
}

if (options.timeline) printTimeline();
else if (options.tree) printTree();
else if (options.packages) {
  const byPackage = new Map();
  for (const [id, us] of selfTicks) {
    const name = packageOf(nodes.get(id));
    byPackage.set(name, (byPackage.get(name) ?? 0) + us);
  }
  show('self time by package', byPackage);
} else {
  const self = new Map();
  const total = new Map();
  for (const [id, us] of selfTicks) {
    const name = label(nodes.get(id));
    self.set(name, (self.get(name) ?? 0) + us);
    const seen = new Set();
    for (let current = id; current !== undefined; current = parent.get(current)) {
      const frame = label(nodes.get(current));
      if (seen.has(frame)) continue;
      seen.add(frame);
      total.set(frame, (total.get(frame) ?? 0) + us);
    }
  }
  show('self time', self);
  show('total time', total);
}
