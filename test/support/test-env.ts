/** Settings the test stack's services run with (short timers, test-only trust). */
export const testServiceEnv: NodeJS.ProcessEnv = {
  LOG_LEVEL: 'info',
};
