import type { Logger } from 'pino';
import { flushTracing } from './trace-context.js';

export interface ShutdownStep {
  name: string;
  run: () => Promise<void>;
}

/**
 * On SIGTERM or SIGINT runs the steps in order (stop taking work, finish in-flight, flush, close
 * pools), then exits 0; exits 1 if they take longer than the deadline or a second signal arrives.
 */
export function installShutdown(logger: Logger, steps: ShutdownStep[], deadlineMs = 25_000): InstalledShutdown {
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal, exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error({ deadlineMs }, 'shutdown deadline exceeded, exiting');
      process.exit(1);
    }, deadlineMs);
    deadline.unref();
    void (async () => {
      for (const step of steps) {
        try {
          await step.run();
          logger.info({ step: step.name }, 'shutdown step done');
        } catch (error) {
          logger.error({ err: error, step: step.name }, 'shutdown step failed');
        }
      }
      // The spans still buffered (tracing.ts; nothing when tracing is off).
      await flushTracing();
      logger.info('shutdown complete');
      logger.flush();
      process.exit(0);
    })();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return {
    get stopping() {
      return stopping;
    },
    uninstall() {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
    },
  };
}

export interface InstalledShutdown {
  /** A signal arrived: the steps are running, and the process exits when they are done. */
  readonly stopping: boolean;
  /** Removes the handlers (before other steps are installed in their place). */
  uninstall(): void;
}

/** Logs and exits when start-up fails (bad config, unreachable dependency). */
export function exitOnStartupFailure(logger: Logger, error: unknown): never {
  logger.fatal({ err: error }, error instanceof Error ? error.message : 'start-up failed');
  logger.flush();
  process.exit(1);
}
