import { readFileSync, globSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

const include = ['services/*/src/**/*.test.ts', 'packages/*/src/**/*.test.ts'];
/** Tests that take the running stack (`inject('stack')`) need `npm test`; the others run here alone. */
const needsStack = include
  .flatMap((pattern) => globSync(pattern))
  .filter((file) => readFileSync(file, 'utf8').includes("inject('stack')"));

/** `npm run test:unit`: the unit tests beside the code, without starting the stack (seconds, not minutes). */
export default defineConfig({
  test: {
    include,
    exclude: ['**/node_modules/**', '**/dist/**', ...needsStack],
    testTimeout: 60_000,
  },
});
