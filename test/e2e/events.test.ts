import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { adminCliPath, startStack, type ServiceInstance, type Stack } from '@tws/devstack';
import { loadTasksProto } from '@tws/proto-types';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import {
  addMember,
  createComment,
  createProject,
  createSection,
  createTask,
  getStatuses,
  getTask,
  keyOf,
  patchTask,
  pollUntil,
  TIMESTAMP,
  type Status,
  type Task,
} from '../support/fixtures.js';
import { testServiceEnv } from '../support/test-env.js';
import { taskEventsTopic } from '@tws/contracts';

const topic = taskEventsTopic;
const EVENT_ID = /^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DATA_KEYS = ['assigneeId', 'createdAt', 'id', 'isCompleted', 'labels', 'listId', 'name', 'number', 'projectId', 'statusId'];

interface Payload {
  id: string;
  event: 'task.created' | 'task.updated' | 'task.completed';
  createdAt: string;
  data: {
    id: string;
    number: number;
    name: string;
    isCompleted: boolean;
    listId: string;
    projectId: string;
    assigneeId: string | null;
    statusId: string | null;
    labels: unknown[];
    createdAt: string;
  };
}

interface Received {
  key: string;
  headers: Record<string, string>;
  partition: number;
  offset: bigint;
  payload: Payload;
  raw: string;
}

/** Reads task-events.v1 from the beginning with its own consumer group and keeps every message. */
class EventCollector {
  readonly received: Received[] = [];
  private constructor(private readonly consumer: Consumer) {}

  static async start(brokers: string[]): Promise<EventCollector> {
    const kafka = new Kafka({ clientId: 'events-test', brokers, logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `events-test-${randomUUID()}` });
    const collector = new EventCollector(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? String(value[0]) : String(value);
        }
        const raw = message.value?.toString('utf8') ?? '';
        collector.received.push({
          key: message.key?.toString('utf8') ?? '',
          headers,
          partition,
          offset: BigInt(message.offset),
          payload: JSON.parse(raw) as Payload,
          raw,
        });
      },
    });
    return collector;
  }

  /** Events of one task, in the order the consumer saw them (its partition's order). */
  of(taskId: string): Received[] {
    return this.received.filter((event) => event.key === taskId);
  }

  /** Waits until the task has `count` events, then a little longer to catch any extra one. */
  async waitFor(taskIds: Record<string, number>, timeoutMs = 30_000): Promise<void> {
    const complete = (): boolean => Object.entries(taskIds).every(([id, count]) => this.of(id).length >= count);
    await pollUntil(async () => complete(), (done) => done, { timeoutMs, intervalMs: 100 });
    if (!complete()) {
      const got = Object.fromEntries(Object.keys(taskIds).map((id) => [id, this.of(id).map((event) => event.payload.event)]));
      throw new Error(`events did not arrive in ${timeoutMs} ms: ${JSON.stringify(got)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}

type Expected = [Payload['event'], Partial<Payload['data']>];

/** Every event is the contract's payload for this task, with the event id and kind in headers. */
function checkEnvelope(event: Received, task: { id: string; number: number; projectId: string; createdAt: string }, workspaceId: string): void {
  expect(Object.keys(event.payload)).toEqual(['id', 'event', 'createdAt', 'data']);
  expect(event.payload.id).toMatch(EVENT_ID);
  expect(event.payload.createdAt).toMatch(TIMESTAMP);
  expect(Object.keys(event.payload.data).sort()).toEqual(DATA_KEYS);
  expect(event.raw).not.toContain('description');
  expect(event.key).toBe(task.id);
  expect(event.headers).toMatchObject({ 'event-id': event.payload.id, 'event-type': event.payload.event, 'workspace-id': workspaceId });
  expect(event.payload.data).toMatchObject({
    id: task.id,
    number: task.number,
    projectId: task.projectId,
    createdAt: task.createdAt,
    labels: [],
  });
}

function checkSequence(events: Received[], expected: Expected[]): void {
  expect(events.map((event) => event.payload.event)).toEqual(expected.map(([kind]) => kind));
  expected.forEach(([, data], index) => expect(events[index]!.payload.data).toMatchObject(data));
  // One partition, increasing offsets: Kafka keeps the task's order for every consumer.
  expect(new Set(events.map((event) => event.partition)).size).toBe(1);
  for (let index = 1; index < events.length; index++) expect(events[index]!.offset > events[index - 1]!.offset).toBe(true);
  expect(new Set(events.map((event) => event.payload.id)).size).toBe(events.length);
}

describe('task events on task-events.v1', () => {
  let collector: EventCollector;
  let ws: TestWorkspace;
  let key: Credentials;
  let statuses: { todo: Status; done: Status; custom: Status };

  beforeAll(async () => {
    collector = await EventCollector.start(inject('stack').kafkaBrokers);
    ws = await createWorkspace({ plan: 'pro' });
    key = keyOf(ws);
    statuses = await getStatuses(key);
  });
  afterAll(async () => {
    await collector?.stop();
  });

  it('one event per effective change, of the right kind, in order, with exactly the contract payload', async () => {
    const { todo, done, custom } = statuses;
    const member = await addMember(ws.workspace.id, 'member');
    const project = await createProject(key);
    const second = await createSection(key, project.id);
    const created = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'Draft' });
    const id = created.id;
    const expected: Expected[] = [
      ['task.created', { name: 'Draft', isCompleted: false, listId: project.defaultListId, statusId: todo.id, assigneeId: null }],
    ];
    /** A PATCH and the event it must produce (none for a no-op). */
    const change = async (body: Record<string, unknown>, event: Expected | null): Promise<Task> => {
      const task = await patchTask(key, id, body);
      if (event) expected.push(event);
      return task;
    };

    await change({ name: 'Final' }, ['task.updated', { name: 'Final' }]);
    await change({ name: 'Final' }, null);
    await change({ listId: second.id }, ['task.updated', { listId: second.id }]);
    await change({ listId: second.id }, null);
    await change({ assigneeId: member.userId }, ['task.updated', { assigneeId: member.userId }]);
    await change({ description: 'Some **bold** words' }, ['task.updated', { name: 'Final' }]);
    await change({ description: 'Some **bold** words' }, null);
    await change({ isCompleted: true }, ['task.completed', { isCompleted: true, statusId: done.id }]);
    await change({ isCompleted: true }, null);
    await change({ statusId: done.id }, null);
    await change({ isCompleted: false }, ['task.updated', { isCompleted: false, statusId: todo.id }]);
    await change({ statusId: custom.id }, ['task.updated', { isCompleted: false, statusId: custom.id }]);
    await change({ statusId: done.id }, ['task.completed', { isCompleted: true, statusId: done.id }]);
    await change({ assigneeId: null }, ['task.updated', { assigneeId: null, isCompleted: true }]);
    await change({ description: null }, ['task.updated', { assigneeId: null }]);
    const final = await getTask(key, id);

    // Comments emit nothing, and neither does DELETE.
    const comment = await createComment(key, id, 'Looks good');
    expect((await api('DELETE', `/v1/comments/${comment.id}`, { credentials: key })).status).toBe(204);
    expect((await api('DELETE', `/v1/tasks/${id}`, { credentials: key })).status).toBe(204);

    await collector.waitFor({ [id]: expected.length });
    const events = collector.of(id);
    checkSequence(events, expected);
    const identity = { id, number: created.number, projectId: project.id, createdAt: final.createdAt };
    for (const event of events) checkEnvelope(event, identity, ws.workspace.id);
    // The last event is a snapshot of the task as GET shows it (without the description).
    const { description: _description, ...snapshot } = final;
    expect(events.at(-1)!.payload.data).toStrictEqual(snapshot);
    for (const event of events) expect(Date.parse(event.payload.createdAt)).toBeGreaterThanOrEqual(Date.parse(final.createdAt));
  });

  it('keeps each task’s order when many tasks change at once', async () => {
    const project = await createProject(key);
    const tasks = await Promise.all(
      Array.from({ length: 8 }, (_, index) => createTask(key, { projectId: project.id, listId: project.defaultListId, name: `T${index}` })),
    );
    await Promise.all(
      tasks.map(async (task, index) => {
        await patchTask(key, task.id, { name: `T${index} renamed` });
        await patchTask(key, task.id, { isCompleted: true });
        await patchTask(key, task.id, { isCompleted: false });
      }),
    );
    await collector.waitFor(Object.fromEntries(tasks.map((task) => [task.id, 4])));
    tasks.forEach((task, index) =>
      checkSequence(collector.of(task.id), [
        ['task.created', { name: `T${index}`, number: task.number }],
        ['task.updated', { name: `T${index} renamed` }],
        ['task.completed', { isCompleted: true }],
        ['task.updated', { isCompleted: false }],
      ]),
    );
    // Numbers 1..8, no gaps, no duplicates.
    expect(tasks.map((task) => task.number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('parallel PATCHes of one task: one event per change, the last one is the final state', async () => {
    const project = await createProject(key);
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'Contended' });
    const names = Array.from({ length: 12 }, (_, index) => `Contended ${index}`);
    await Promise.all(names.map((name) => patchTask(key, task.id, { name })));
    const final = await getTask(key, task.id);

    await collector.waitFor({ [task.id]: 1 + names.length });
    const events = collector.of(task.id);
    expect(events.map((event) => event.payload.event)).toEqual(['task.created', ...names.map(() => 'task.updated')]);
    expect(events.slice(1).map((event) => event.payload.data.name).sort()).toEqual([...names].sort());
    expect(events.at(-1)!.payload.data.name).toBe(final.name);
  });
});

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
