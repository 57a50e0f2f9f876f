import type { Logger } from 'pino';

export interface PeriodicJobOptions {
  /** Named in the log line of a failed run. */
  name: string;
  /** Time between the end of one run and the start of the next; 0 or less: never runs. */
  intervalMs: number;
  /** Delay before the first run (default: intervalMs). */
  firstRunAfterMs?: number;
  run: () => Promise<unknown>;
  logger: Logger;
}

/**
 * A job that runs every `intervalMs` (retention, sweeps): never two runs at once, a failed run is
 * logged and the next one comes at the next interval, and `stop()` (SIGTERM) stops scheduling and
 * waits for a run in progress. Timers are unref'd: a job never keeps a process alive.
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(private readonly options: PeriodicJobOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(this.options.firstRunAfterMs ?? this.options.intervalMs);
  }

  /** Stops scheduling and waits for the run in progress, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.options.intervalMs <= 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.options
        .run()
        .then(
          () => undefined,
          (error: unknown) => this.options.logger.warn({ err: error, job: this.options.name }, `${this.options.name} failed; retrying at the next interval`),
        )
        .finally(() => {
          this.running = undefined;
          this.schedule(this.options.intervalMs);
        });
    }, delayMs);
    this.timer.unref();
  }
}
