// Peak RSS of every service instance while a measurement runs: /proc/<pid>/status VmRSS sampled
// every few tens of ms, and VmHWM (the kernel's own high-water mark since the process started) at
// the end; a service that died meanwhile (e.g. out of memory) is marked `exited`.
import { readFileSync } from 'node:fs';
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

/** Starts sampling; `stop()` gives `{ <service>: { peakRssMb, hwmRssMb, exited } }`. */
export function sampleRss(stack, intervalMs) {
  const peaks = new Map();
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
          const hwmKb = statusKb(instance.process.child.pid, 'VmHWM');
          return [
            name,
            {
              peakRssMb: round((peaks.get(name) ?? 0) / 1024, 1),
              hwmRssMb: hwmKb === null ? null : round(hwmKb / 1024, 1),
              // The process is gone (e.g. killed out of memory): its figures stop where it died.
              exited: hwmKb === null,
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
  for (const [service, { peakRssMb }] of Object.entries(peaks)) if (peakRssMb > largest.peakRssMb) largest = { service, peakRssMb };
  return largest;
}
