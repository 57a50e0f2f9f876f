// How fast this host is right now: a fixed piece of single-threaded CPU work of the kind the services
// do (JSON in and out, SHA-256), timed on the bench's own thread while the stack is idle. The machine
// is a VM whose speed moves with its neighbours (the same probe took 0.9 s and 1.4 s minutes apart,
// idle both times), so a run's absolute figures are read against the probe taken just before them.
import { createHash } from 'node:crypto';

const sample = { id: 'a8f4c2e0-5a7e-4c1e-9d6a-2b8f0e4d1c3a', name: 'Write the release notes', tags: ['docs', 'release'], order: 42 };

function work() {
  let sink = 0;
  for (let i = 0; i < 60_000; i += 1) {
    const text = JSON.stringify({ ...sample, order: i });
    sink += JSON.parse(text).order;
    sink += createHash('sha256').update(text).digest()[0];
  }
  return sink;
}

/** Median of `runs` timings of the probe, in ms (lower is faster). */
export function probeHostSpeed(runs = 5) {
  work(); // compile
  const times = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    work();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return Number(times[Math.floor(times.length / 2)].toFixed(1));
}
