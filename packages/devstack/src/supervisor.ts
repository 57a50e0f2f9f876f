import type { ManagedProcess } from './processes.js';

/** How a supervised process is restarted (`npm start` only; test stacks let crashes show). */
export interface RestartPolicy {
  /** Delay before the first restart; doubles after each crash in a row. */
  initialDelayMs: number;
  /** Largest delay between restarts. */
  maxDelayMs: number;
  /** A process that stayed up this long crashed "fresh": the delay goes back to `initialDelayMs`. */
  resetAfterMs: number;
  /** Receives one line per crash (with the delay before the restart) and per restart. */
  log: (message: string) => void;
}

/** What Kubernetes does with a crashed container: 1 s, doubling to 30 s, reset after a quiet minute (theirs: 10 s → 5 min, 10 min). */
export const defaultRestartPolicy: Omit<RestartPolicy, 'log'> = { initialDelayMs: 1_000, maxDelayMs: 30_000, resetAfterMs: 60_000 };

export interface SupervisedProcess {
  readonly name: string;
  /** The process running now (a new one after each restart). */
  readonly current: ManagedProcess;
  /** Restarts so far. */
  readonly restarts: number;
  /** Stops restarting (a pending restart is cancelled), then stops the current process. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts a process with `launch` and starts it again whenever it exits while not stopped, after a
 * delay that doubles with each crash in a row (`policy`), logging each crash and restart.
 */
export function supervise(name: string, launch: () => ManagedProcess, policy: RestartPolicy): SupervisedProcess {
  let current = launch();
  let stopped = false;
  let restarts = 0;
  let delayMs = policy.initialDelayMs;
  let pending: NodeJS.Timeout | undefined;

  const watch = (child: ManagedProcess, startedAt: number): void => {
    void child.exited.then((code) => {
      if (stopped || child !== current) return;
      const upMs = Date.now() - startedAt;
      if (upMs >= policy.resetAfterMs) delayMs = policy.initialDelayMs;
      const wait = delayMs;
      delayMs = Math.min(delayMs * 2, policy.maxDelayMs);
      policy.log(`${name} exited unexpectedly (code ${code}) after ${upMs} ms; restarting in ${wait} ms; see ${child.logFile}`);
      pending = setTimeout(() => {
        pending = undefined;
        if (stopped) return;
        restarts += 1;
        current = launch();
        policy.log(`${name} restarted (restart ${restarts}, pid ${current.child.pid})`);
        watch(current, Date.now());
      }, wait);
    });
  };
  watch(current, Date.now());

  return {
    name,
    get current() {
      return current;
    },
    get restarts() {
      return restarts;
    },
    async stop(graceMs) {
      stopped = true;
      if (pending) clearTimeout(pending);
      pending = undefined;
      await current.stop(graceMs);
    },
  };
}
