import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['services/*/src/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Suites share one stack; running files one after another keeps the 2-core machine's timings stable.
    fileParallelism: false,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
