import { afterAll, beforeAll, expect, test } from 'vitest';
import { startGateway, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  // Nothing listens where the attachments and webhooks services should be (the fake tasks service
  // serves no grpc.health.v1 either).
  h = await startGateway({ ATTACHMENTS_GRPC_TARGET: '127.0.0.1:1', WEBHOOKS_GRPC_TARGET: '127.0.0.1:1' });
});
afterAll(async () => h.close());

test('/readyz stays 200 with the backends down, and reports each of them', async () => {
  const response = await h.app.inject({ url: '/readyz' });
  expect(response.statusCode).toBe(200);
  const body = response.json<{ status: string; backends: Record<string, string> }>();
  expect(body.status).toBe('ok');
  expect(Object.keys(body.backends).sort()).toEqual(['attachments service', 'tasks service', 'webhooks service']);
  expect(body.backends['webhooks service']).not.toBe('ok');
});

test('/readyz turns 503 once shutting down', async () => {
  h.app.markShuttingDown();
  const response = await h.app.inject({ url: '/readyz' });
  expect(response.statusCode).toBe(503);
  expect(response.json()).toEqual({ status: 'shutting down' });
});
