// Peak RSS of every service instance while a measurement runs: /proc/<pid>/status VmRSS sampled
// every few tens of ms, and VmHWM (the kernel's own high-water mark since the process started) at
// the end. A service that died meanwhile is marked `exited`, with the reason its log gives (the
// services run with a 128 MB V8 heap: out of memory is the likely one); one that was already gone
// when the measurement began is `notRunning` and left out of the peaks.
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { round } from '../lib/numbers.mjs';

function statusKb(pid, field) {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

const nameOf = (instance) => (instance.replica ? `${instance.name}-${instance.replica}` : instance.name);

/** Why a service's process ended, from the last 64 KB of its log (the launcher writes <logDir>/<name>.log). */
function exitReason(stack, name) {
  try {
    const file = path.join(stack.logDir, `${name}.log`);
    const size = statSync(file).size;
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    const fd = openSync(file, 'r');
    try {
      readSync(fd, buffer, 0, length, size - length);
    } finally {
      closeSync(fd);
    }
    const tail = buffer.toString('utf8');
    if (tail.includes('heap out of memory')) return `JavaScript heap out of memory (${name}.log)`;
    return `see ${name}.log in ${stack.logDir}`;
  } catch {
    return 'no log';
  }
}

/** Starts sampling; `stop()` gives `{ <service>: { peakRssMb, hwmRssMb, exited, exitReason? } | { notRunning: true } }`. */
export function sampleRss(stack, intervalMs) {
  const peaks = new Map();
  const runningAtStart = new Set(
    stack.services.instances.filter((instance) => statusKb(instance.process.child.pid, 'VmRSS') !== null).map(nameOf),
  );
  const sample = () => {
    for (const instance of stack.services.instances) {
      const kb = statusKb(instance.process.child.pid, 'VmRSS');
      if (kb !== null) peaks.set(nameOf(instance), Math.max(peaks.get(nameOf(instance)) ?? 0, kb));
    }
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return Object.fromEntries(
        stack.services.instances.map((instance) => {
          const name = nameOf(instance);
          if (!runningAtStart.has(name)) return [name, { notRunning: true }];
          const hwmKb = statusKb(instance.process.child.pid, 'VmHWM');
          const exited = hwmKb === null;
          return [
            name,
            {
              peakRssMb: round((peaks.get(name) ?? 0) / 1024, 1),
              hwmRssMb: exited ? null : round(hwmKb / 1024, 1),
              exited,
              ...(exited ? { exitReason: exitReason(stack, name) } : {}),
            },
          ];
        }),
      );
    },
  };
}

/** The largest peak of a `sampleRss` result, with the service it belongs to. */
export function largestPeak(peaks) {
  let largest = { service: null, peakRssMb: 0 };
  for (const [service, peak] of Object.entries(peaks)) if ((peak.peakRssMb ?? 0) > largest.peakRssMb) largest = { service, peakRssMb: peak.peakRssMb };
  return largest;
}

/** `service: reason` of every service that died during the measurement. */
export const exitsOf = (peaks) =>
  Object.entries(peaks)
    .filter(([, peak]) => peak.exited)
    .map(([service, peak]) => `${service}: ${peak.exitReason}`);
