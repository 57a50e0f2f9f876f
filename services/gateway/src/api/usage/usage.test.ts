import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, fakeCredentials, startGateway, validApiKey, type Harness } from '../../testing/harness.js';

/*
 * GET /v1/usage when the attachments service does not answer (nothing listens on its port): the
 * tasks service's plan and counters still come back, with `attachments: null`. The answer with
 * attachments is covered end to end (test/e2e/api-usage.test.ts).
 */
let h: Harness;
beforeAll(async () => {
  h = await startGateway({ ATTACHMENTS_GRPC_TARGET: '127.0.0.1:1', GRPC_DEADLINE_MS: '2000' });
  fakeCredentials(h.fake);
});
afterAll(async () => h.close());

describe('GET /v1/usage without the attachments service', () => {
  test('answers 200 with the plan, limits and counts, and attachments null', async () => {
    h.fake.handlers.set('GetUsage', () => ({ plan: 'PLAN_FREE', maxProjects: 3, maxTasks: 300, projectCount: 2, taskCount: 41 }));
    const response = await call(h.app, 'GET', '/v1/usage', { apiKey: validApiKey });
    expect(response.status).toBe(200);
    expect(response.json).toStrictEqual({
      plan: 'free',
      projects: { count: 2, limit: 3 },
      tasks: { count: 41, limit: 300 },
      attachments: null,
    });
  });

  test('a plan without limits answers null limits', async () => {
    h.fake.handlers.set('GetUsage', () => ({ plan: 'PLAN_PRO', projectCount: 12, taskCount: 4000 }));
    const response = await call(h.app, 'GET', '/v1/usage', { apiKey: validApiKey });
    expect(response.json).toMatchObject({ plan: 'pro', projects: { count: 12, limit: null }, tasks: { count: 4000, limit: null } });
  });
});
