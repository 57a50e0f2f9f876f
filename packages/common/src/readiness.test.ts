import { expect, test } from 'vitest';
import { runReadiness, untilFirstSuccess } from './readiness.js';

test('untilFirstSuccess: unready until the check passes once, then ready whatever the dependency does', async () => {
  let up = false;
  const checked = untilFirstSuccess({
    name: 'object storage',
    check: async () => {
      if (!up) throw new Error('bucket is missing');
    },
  });
  expect(await runReadiness([checked])).toEqual({ ready: false, checks: { 'object storage': 'bucket is missing' } });
  up = true;
  expect((await runReadiness([checked])).ready).toBe(true);
  up = false;
  expect(await runReadiness([checked])).toEqual({ ready: true, checks: { 'object storage': 'ok' } });
});
