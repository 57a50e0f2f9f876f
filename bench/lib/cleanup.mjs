// Everything the bench starts registers how to undo it; the steps run last-in first-out at the end
// of the run, on failure, and on Ctrl-C / SIGTERM.
import { log } from './log.mjs';

const steps = [];

export const onCleanup = (step) => void steps.push(step);

export async function cleanup() {
  while (steps.length) {
    const step = steps.pop();
    try {
      await step();
    } catch (error) {
      log(`clean-up step failed: ${error.message}`);
    }
  }
}

/** On SIGINT or SIGTERM: clean up once, then exit 130. */
export function trapSignals() {
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = true;
      log(`${signal}: stopping everything`);
      void cleanup().then(() => process.exit(130));
    });
  }
}
