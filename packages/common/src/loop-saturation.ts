import { performance } from 'node:perf_hooks';

/** Cumulative time (ms) the event loop spent idle (waiting in the poll) and active, as `performance.eventLoopUtilization()` counts it. */
export interface LoopTimes {
  idle: number;
  active: number;
}

export interface LoopSaturationOptions {
  /** Share of a window the loop must be active to count as saturated (default 0.9). */
  threshold?: number;
  /** Length of a window (ms, default 1,000): the answer holds until the next window has passed. */
  windowMs?: number;
  /** The loop's cumulative times (tests); default `performance.eventLoopUtilization()`. */
  sample?: () => LoopTimes;
}

/**
 * Whether this process's event loop was saturated over its last window: active (running callbacks,
 * or runnable and waiting for a CPU to run them on) for at least `threshold` of it. Every queue of a
 * saturated process grows because of the process itself, whatever it waits for downstream. Sampled
 * lazily: a call in a window that has not passed yet answers from the window before, so calling it
 * per item of work costs a comparison; a process that does not ask pays nothing.
 */
export class LoopSaturation {
  private readonly threshold: number;
  private readonly windowMs: number;
  private readonly sample: () => LoopTimes;
  private last: LoopTimes;
  private lastAt: number;
  private busy = false;

  constructor(options: LoopSaturationOptions = {}, now = performance.now()) {
    this.threshold = options.threshold ?? 0.9;
    this.windowMs = options.windowMs ?? 1_000;
    this.sample = options.sample ?? (() => performance.eventLoopUtilization());
    this.last = this.sample();
    this.lastAt = now;
  }

  saturated(now = performance.now()): boolean {
    if (now - this.lastAt >= this.windowMs) {
      const current = this.sample();
      const active = current.active - this.last.active;
      const total = active + current.idle - this.last.idle;
      this.busy = total > 0 && active / total >= this.threshold;
      this.last = current;
      this.lastAt = now;
    }
    return this.busy;
  }
}

/** This process's event loop, for every reader (the loop is the process's, not a component's). */
export const eventLoopSaturation = new LoopSaturation();
