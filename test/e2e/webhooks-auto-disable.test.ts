import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { taskEventsTopic } from '@tws/contracts';
import { startStack, type Stack } from '@tws/devstack';
import { loadWebhooksProto } from '@tws/proto-types';
import type { Endpoint__Output } from '@tws/proto-types/generated/webhooks/v1/Endpoint';
import type { WebhooksServiceClient } from '@tws/proto-types/generated/webhooks/v1/WebhooksService';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pollUntil } from '../support/fixtures.js';
import { testServiceEnv } from '../support/test-env.js';
import { taskEventMessage } from '../support/webhooks/fixtures.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';

/** The auto-disable window of this suite's stack (the default is 3 days). */
const windowSeconds = 4;

/**
 * Auto-disable on a stack of its own: the shared stack keeps the 3-day default, so other suites'
 * failing endpoints are never disabled under them. Endpoints are registered and read over gRPC and
 * events published to task-events.v1 as the tasks service's relay does (as webhooks-restart does);
 * the gateway's mapping of the same fields is covered in webhooks-admin.test.ts.
 */
describe('auto-disable of an endpoint whose every attempt fails (WEBHOOK_AUTO_DISABLE_AFTER_SECONDS)', () => {
  const { webhooks } = inject('stack');
  let stack: Stack;
  let client: WebhooksServiceClient;
  let kafka: Kafka;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    stack = await startStack({
      label: 'webhooks-auto-disable',
      extraEnv: { ...testServiceEnv, ...webhooks.serviceEnv, WEBHOOK_AUTO_DISABLE_AFTER_SECONDS: String(windowSeconds), WEBHOOK_RETRY_DELAYS: '1s,1s,1s,1s' },
    });
    const instance = stack.services.instances.find((candidate) => candidate.name === 'webhooks');
    client = new (loadWebhooksProto().webhooks.v1.WebhooksService)(`127.0.0.1:${instance?.grpcPort}`, grpc.credentials.createInsecure());
    kafka = new Kafka({ clientId: 'webhooks-auto-disable-test', brokers: stack.infra.kafkaBrokers, logLevel: logLevel.NOTHING });
  }, 240_000);

  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    client?.close();
    await stack?.stop();
  }, 120_000);

  async function receiver(reply: (n: number) => number): Promise<TestReceiver> {
    const started = await startReceiver({ reply });
    receivers.push(started);
    return started;
  }

  async function publish(workspaceId: string, count = 1): Promise<void> {
    const producer = kafka.producer();
    await producer.connect();
    try {
      const messages = Array.from({ length: count }, () => taskEventMessage({ workspaceId, kind: 'task.updated' }).message);
      await producer.send({ topic: taskEventsTopic, acks: -1, messages });
    } finally {
      await producer.disconnect();
    }
  }

  async function endpointOf(workspaceId: string, id: string): Promise<Endpoint__Output> {
    const { endpoints } = await callUnary(client, client.ListEndpoints, { workspaceId });
    const found = endpoints.find((endpoint) => endpoint.id === id);
    if (!found) throw new Error(`endpoint ${id} not listed`);
    return found;
  }

  it('disables the failing endpoint (logged, counted, listed), not one that succeeds now and then; PATCH re-enables it', async () => {
    const workspaceId = randomUUID();
    const secret = `auto-disable-${randomUUID()}`;
    let failing = true;
    const broken = await receiver(() => (failing ? 500 : 204));
    // Fails every other request: never a whole window of failures.
    const flaky = await receiver((n) => (n % 2 === 1 ? 500 : 204));
    const healthy = await receiver(() => 204);
    const create = (url: string) => callUnary(client, client.CreateEndpoint, { workspaceId, url, secret, events: [] });
    const { endpoint: brokenEndpoint } = await create(`${broken.origin}/`);
    const { endpoint: flakyEndpoint } = await create(`${flaky.origin}/`);
    await create(`${healthy.origin}/`);

    // An event a second for longer than the window: the broken endpoint fails every attempt.
    const started = Date.now();
    let sent = 0;
    let disabled: Endpoint__Output | undefined;
    while (Date.now() - started < (windowSeconds + 12) * 1000) {
      await publish(workspaceId);
      sent += 1;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const current = await endpointOf(workspaceId, brokenEndpoint!.id);
      if (!current.enabled) {
        disabled = current;
        break;
      }
    }
    expect(disabled, 'the broken endpoint was not disabled').toBeDefined();
    const failingFor = Date.parse(disabled!.disabledAt ?? '') - started;
    expect(failingFor).toBeGreaterThanOrEqual(windowSeconds * 1000);
    expect(disabled).toMatchObject({ enabled: false, disabledReason: 'DISABLED_REASON_FAILING' });
    expect(broken.requests.every((request) => request.status === 500)).toBe(true);
    expect(await endpointOf(workspaceId, flakyEndpoint!.id)).toMatchObject({ enabled: true, disabledReason: 'DISABLED_REASON_UNSPECIFIED' });

    // No new deliveries: events keep reaching the healthy endpoint, none the disabled one.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const brokenBefore = broken.requests.length;
    const healthyBefore = healthy.requests.length;
    await publish(workspaceId, 3);
    await healthy.waitFor(healthyBefore + 3, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(broken.requests.length).toBe(brokenBefore);
    expect(healthy.requests.length).toBe(sent + 3);

    // Logged at warn with the endpoint id and never the secret; counted.
    const log = await readFile(path.join(stack.logDir, 'webhooks.log'), 'utf8');
    const lines = log.split('\n').filter((line) => line.includes('webhook endpoint disabled'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', endpointId: brokenEndpoint!.id, disabledReason: 'failing' });
    expect(log).not.toContain(secret);
    const ops = stack.services.instances.find((instance) => instance.name === 'webhooks')?.opsUrl;
    expect(await (await fetch(`${ops}/metrics`)).text()).toMatch(/webhook_endpoints_auto_disabled_total\{service="webhooks"\} 1\n/);

    // Re-enabled with PATCH (UpdateEndpoint): the disabled fields are cleared and deliveries resume.
    failing = false;
    const { endpoint: enabled } = await callUnary(client, client.UpdateEndpoint, { workspaceId, endpointId: brokenEndpoint!.id, enabled: true });
    expect(enabled).toMatchObject({ enabled: true, disabledReason: 'DISABLED_REASON_UNSPECIFIED' });
    expect(enabled?.disabledAt ?? null).toBeNull();
    await publish(workspaceId);
    const [resumed] = await pollUntil(
      async () => broken.requests.slice(brokenBefore),
      (requests) => requests.length > 0,
      { timeoutMs: 20_000 },
    );
    expect(resumed?.status).toBe(204);
  }, 90_000);
});
