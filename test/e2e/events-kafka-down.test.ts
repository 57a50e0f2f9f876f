import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { adminCliPath, startStack, type ServiceInstance, type Stack } from '@tws/devstack';
import { loadTasksProto } from '@tws/proto-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkspace } from '../support/admin.js';
import { checkSequence, EventCollector } from '../support/event-collector.js';
import { pollUntil } from '../support/fixtures.js';
import { testServiceEnv } from '../support/test-env.js';

/*
 * The tasks service's outbox relay on a stack of this file's own (its Kafka and Postgres get
 * stopped): changes committed within OUTBOX_LINGER_MS share one Kafka request; while Kafka is down
 * the API keeps working and events wait in the outbox, each arriving exactly once after the broker
 * returns; the relay takes its lock again after a Postgres restart; one relay is active across
 * replicas and a standby takes over when it dies.
 */

describe('task events while Kafka is down', () => {
  let stack: Stack | undefined;
  let skipReason: string | undefined;

  beforeAll(async () => {
    stack = await startStack({
      label: 'events-outage',
      extraEnv: { ...testServiceEnv, OUTBOX_MAX_BACKOFF_MS: '1000', OUTBOX_POLL_INTERVAL_MS: '500', OUTBOX_LINGER_MS: '500' },
    });
    if (!stack.infra.kafka) skipReason = 'Kafka is external (KAFKA_BROKERS): this test needs to stop the broker';
  }, 300_000);
  afterAll(async () => {
    await stack?.stop();
  }, 120_000);

  /** The admin CLI against this test's own stack. */
  async function cli(args: string[], tasks = tasksReplica(0)): Promise<Record<string, unknown>> {
    const { stdout } = await promisify(execFile)(process.execPath, [adminCliPath, ...args], {
      env: { ...process.env, TASKS_GRPC_TARGET: `127.0.0.1:${tasks.grpcPort}`, DEV_JWT_PRIVATE_KEY_FILE: stack!.devJwt.privateKeyFile },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  /** An API call to this stack's gateway that must answer `status`. */
  async function call<T>(apiKey: string, method: string, urlPath: string, body: unknown, status: number): Promise<T> {
    const response = await fetch(`${stack!.services.gatewayUrl}${urlPath}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    expect(response.status, `${method} ${urlPath}: ${text}`).toBe(status);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  function tasksReplica(replica: number): ServiceInstance {
    return stack!.services.instances.find((instance) => instance.name === 'tasks' && instance.replica === replica)!;
  }

  /** A gauge of a tasks replica's /metrics (NaN when absent or unreachable). */
  async function gauge(name: string, tasks = tasksReplica(0)): Promise<number> {
    try {
      const metrics = await (await fetch(`${tasks.opsUrl}/metrics`)).text();
      const match = new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, 'm').exec(metrics);
      return match ? Number(match[1]) : Number.NaN;
    } catch {
      return Number.NaN;
    }
  }
  const backlog = (): Promise<number> => gauge('outbox_backlog_events');

  it('changes committed within OUTBOX_LINGER_MS of each other share one Kafka request', async () => {
    const created = (await cli(['workspace', 'create', '--name', 'Linger', '--plan', 'pro'])) as unknown as TestWorkspace;
    const apiKey = created.apiKey.key;
    const project = await call<{ id: string; defaultListId: string }>(apiKey, 'POST', '/v1/projects', { name: 'Linger' }, 201);
    const task = await call<{ id: string }>(apiKey, 'POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: 'Linger' }, 201);
    expect(await pollUntil(backlog, (events) => events === 0, { timeoutMs: 30_000 })).toBe(0);
    const before = { events: await gauge('outbox_published_events_total'), requests: await gauge('outbox_publish_requests_total') };

    // One after another, each committed before the next is sent: without the linger the relay, woken
    // by each commit, would publish most of them on their own.
    for (let index = 0; index < 6; index++) await call(apiKey, 'PATCH', `/v1/tasks/${task.id}`, { name: `Linger ${index}` }, 200);
    const published = await pollUntil(
      () => gauge('outbox_published_events_total'),
      (events) => events >= before.events + 6,
      { timeoutMs: 30_000 },
    );
    expect(published).toBe(before.events + 6);
    expect((await gauge('outbox_publish_requests_total')) - before.requests).toBeLessThanOrEqual(2);
  });

  it('the API keeps working, events wait in the outbox, and each arrives exactly once after the broker returns', async (context) => {
    if (skipReason) context.skip(skipReason);
    const kafka = stack!.infra.kafka!;
    const created = (await cli(['workspace', 'create', '--name', 'Outage', '--plan', 'pro'])) as unknown as TestWorkspace;
    const apiKey = created.apiKey.key;
    const project = await call<{ id: string; defaultListId: string }>(apiKey, 'POST', '/v1/projects', { name: 'Outage' }, 201);
    const newTask = (name: string) =>
      call<{ id: string; number: number }>(apiKey, 'POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name }, 201);
    const before = await newTask('Before the outage');

    await kafka.stopServer();
    const during: Array<{ id: string; number: number }> = [];
    for (let index = 0; index < 3; index++) during.push(await newTask(`During ${index}`));
    await call(apiKey, 'PATCH', `/v1/tasks/${before.id}`, { name: 'Renamed while Kafka was down' }, 200);
    await call(apiKey, 'PATCH', `/v1/tasks/${during[0]!.id}`, { isCompleted: true }, 200);
    await call(apiKey, 'PATCH', `/v1/tasks/${during[1]!.id}`, { assigneeId: created.owner.userId }, 200);
    await call(apiKey, 'PATCH', `/v1/tasks/${during[1]!.id}`, { assigneeId: created.owner.userId }, 200); // no-op
    await call(apiKey, 'DELETE', `/v1/tasks/${during[2]!.id}`, undefined, 204);
    // Everything since the stop waits: 3 created + 3 changes (+ possibly "before"'s own event).
    expect(await backlog()).toBeGreaterThanOrEqual(6);

    await kafka.startServer();
    const collector = await EventCollector.start(stack!.infra.kafkaBrokers);
    try {
      await collector.waitFor({ [before.id]: 2, [during[0]!.id]: 2, [during[1]!.id]: 2, [during[2]!.id]: 1 }, 90_000);
      checkSequence(collector.of(before.id), [
        ['task.created', { name: 'Before the outage' }],
        ['task.updated', { name: 'Renamed while Kafka was down' }],
      ]);
      checkSequence(collector.of(during[0]!.id), [['task.created', { name: 'During 0' }], ['task.completed', { isCompleted: true }]]);
      checkSequence(collector.of(during[1]!.id), [
        ['task.created', { assigneeId: null }],
        ['task.updated', { assigneeId: created.owner.userId }],
      ]);
      checkSequence(collector.of(during[2]!.id), [['task.created', { name: 'During 2' }]]);
      // Exactly once: no event id twice anywhere in the topic.
      const ids = collector.received.map((event) => event.payload.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(await pollUntil(backlog, (value) => value === 0, { timeoutMs: 10_000 })).toBe(0);
    } finally {
      await collector.stop();
    }
  }, 300_000);

  it('the relay takes its lock again after losing its database session (Postgres restart)', async (context) => {
    if (skipReason) context.skip(skipReason);
    const postgres = stack!.infra.postgres;
    if (!postgres) context.skip('Postgres is external (DATABASE_URL)');
    const created = (await cli(['workspace', 'create', '--name', 'Restart', '--plan', 'pro'])) as unknown as TestWorkspace;
    const apiKey = created.apiKey.key;
    const project = await call<{ id: string; defaultListId: string }>(apiKey, 'POST', '/v1/projects', { name: 'Restart' }, 201);

    await postgres!.restart(2_000);
    expect(await pollUntil(() => gauge('outbox_relay_active'), (value) => value === 1, { timeoutMs: 20_000 })).toBe(1);
    // The pool drops connections the restart broke; a request may need a retry right after it.
    const task = await pollUntil(
      async () => {
        const response = await fetch(`${stack!.services.gatewayUrl}/v1/tasks`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ projectId: project.id, listId: project.defaultListId, name: 'After the restart' }),
        });
        return response.status === 201 ? ((await response.json()) as { id: string }) : undefined;
      },
      (value) => value !== undefined,
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    expect(task).toBeDefined();
    const collector = await EventCollector.start(stack!.infra.kafkaBrokers);
    try {
      await collector.waitFor({ [task!.id]: 1 });
      checkSequence(collector.of(task!.id), [['task.created', { name: 'After the restart' }]]);
    } finally {
      await collector.stop();
    }
  }, 120_000);

  it('one relay is active across replicas; a standby takes over when the active one dies', async (context) => {
    if (skipReason) context.skip(skipReason);
    const first = tasksReplica(0);
    const second = await stack!.services.startReplica('tasks');
    // The replica that started first holds the advisory lock; the new one stands by.
    expect(await pollUntil(() => gauge('outbox_relay_active', second), (value) => value === 0, { timeoutMs: 5_000 })).toBe(0);
    expect(await gauge('outbox_relay_active', first)).toBe(1);

    await first.process.kill(); // a crash: Postgres drops its session and with it the lock
    expect(await pollUntil(() => gauge('outbox_relay_active', second), (value) => value === 1, { timeoutMs: 15_000 })).toBe(1);

    // Changes made through the survivor are published by it.
    const created = (await cli(['workspace', 'create', '--name', 'Failover', '--plan', 'pro'], second)) as unknown as TestWorkspace;
    const proto = loadTasksProto();
    const client = new proto.tasks.v1.TasksService(`127.0.0.1:${second.grpcPort}`, grpc.credentials.createInsecure());
    const collector = await EventCollector.start(stack!.infra.kafkaBrokers);
    try {
      const workspaceId = created.workspace.id;
      const project = await callUnary(client, client.CreateProject, { workspaceId, name: 'Failover' });
      const task = await callUnary(client, client.CreateTask, { workspaceId, projectId: project.id, listId: project.defaultListId, name: 'After failover' });
      await callUnary(client, client.UpdateTask, { workspaceId, id: task.id, isCompleted: true });
      await collector.waitFor({ [task.id]: 2 });
      checkSequence(collector.of(task.id), [['task.created', { name: 'After failover' }], ['task.completed', { isCompleted: true }]]);
      const ids = collector.received.map((event) => event.payload.id);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      client.close();
      await collector.stop();
    }
  }, 120_000);
});
