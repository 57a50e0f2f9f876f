// CPU accounting from /proc: each watched process's CPU use (in cores) over a measurement, plus the
// infrastructure servers the launcher started (Postgres with all its backends, the Kafka JVM, MinIO).
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { round } from './numbers.mjs';

/**
 * Processes whose CPU time each measurement reports (filled once the stack is up). `serverSide`:
 * the services and the ceiling, whose CPU per request is compared; not the load generator or the receiver.
 */
const watched = [];

/** Adds `{ name, pid, serverSide? }` to the processes every later measurement reports. */
export const watch = (entry) => void watched.push(entry);

/** The sum of the server-side processes' cores in a `cpuMeter()` reading. */
export const serverSideCores = (cpuCores) =>
  Object.entries(cpuCores)
    .filter(([name]) => watched.some((entry) => entry.serverSide && entry.name === name))
    .reduce((sum, [, cores]) => sum + (cores ?? 0), 0);

/** One read of /proc/<pid>/stat: command, parent, and CPU seconds of the process and of its reaped children. */
function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    return {
      command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      parent: Number(fields[1]),
      // utime + stime, cutime + cstime, in clock ticks (USER_HZ = 100)
      ownSeconds: (Number(fields[11]) + Number(fields[12])) / 100,
      childrenSeconds: (Number(fields[13]) + Number(fields[14])) / 100,
    };
  } catch {
    return null; // exited
  }
}

/** The servers the launcher started, by command name, and the row each one gets in `cpuCores`. */
const infraRows = { postgres: 'postgres (all backends)', java: 'kafka (broker JVM)', minio: 'minio' };

/**
 * Infrastructure CPU in seconds: every descendant process of a server, summed. PostgreSQL's
 * postmaster also counts the backends it reaped (cutime), so connections that closed during the
 * measurement are not lost.
 */
function infraCpuSeconds() {
  const stats = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(entry);
    if (stat) stats.set(Number(entry), stat);
  }
  const isDescendant = (pid) => {
    for (let current = stats.get(pid)?.parent; current; current = stats.get(current)?.parent) if (current === process.pid) return true;
    return false;
  };
  const totals = Object.fromEntries(Object.values(infraRows).map((row) => [row, 0]));
  for (const [pid, stat] of stats) {
    const row = infraRows[stat.command];
    if (!row || !isDescendant(pid)) continue;
    const isPostmaster = stat.command === 'postgres' && stats.get(stat.parent)?.command !== 'postgres';
    totals[row] += stat.ownSeconds + (isPostmaster ? stat.childrenSeconds : 0);
  }
  return totals;
}

/** Starts CPU accounting; the returned function gives each watched process's CPU use (in cores) since. */
export function cpuMeter() {
  const start = performance.now();
  const before = watched.map(({ pid }) => procStat(pid)?.ownSeconds ?? null);
  const infraBefore = infraCpuSeconds();
  return () => {
    const seconds = (performance.now() - start) / 1000;
    const infraNow = infraCpuSeconds();
    return {
      ...Object.fromEntries(
        watched.map(({ name, pid }, i) => {
          const now = procStat(pid)?.ownSeconds ?? null;
          return [name, now === null || before[i] === null ? null : round((now - before[i]) / seconds, 2)];
        }),
      ),
      ...Object.fromEntries(Object.entries(infraNow).map(([name, now]) => [name, round((now - infraBefore[name]) / seconds, 2)])),
    };
  };
}
