import { randomBytes } from 'node:crypto';
import type { Stack } from '@tws/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskEventCollector, type CollectedEvent } from '../support/faults/kafka-collector.js';
import { countBy, instancesOf, sleep, stackWorkspace, startFaultStack, timedCall, type TimedResponse } from '../support/faults/stack.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';

/**
 * Every service twice (the gateway list round-robins over both replicas of each backend), a burst
 * of task changes through both gateways, two webhook endpoints (one failing every 7th request so
 * retries happen). Then the same with one replica of each backend SIGKILLed mid-burst.
 */
describe('scale-out: two replicas of every service', () => {
  let stack: Stack | undefined;
  let collector: TaskEventCollector;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    stack = await startFaultStack('faults-scale', {
      replicas: 2,
      extraEnv: { RATE_LIMIT_PER_SECOND: '0', OUTBOX_POLL_INTERVAL_MS: '500', OUTBOX_STANDBY_RETRY_MS: '1000', OUTBOX_MAX_BACKOFF_MS: '1000' },
    });
    collector = await TaskEventCollector.start(stack.infra.kafkaBrokers);
  }, 300_000);
  afterAll(async () => {
    await collector?.stop();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await stack?.stop();
  }, 120_000);

  /** Runs `jobs` with at most `width` in flight. */
  async function pool<T>(jobs: Array<() => Promise<T>>, width: number): Promise<T[]> {
    const results: T[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: width }, async () => {
        while (next < jobs.length) {
          const index = next++;
          results[index] = await jobs[index]!();
        }
      }),
    );
    return results;
  }

  async function scenario(label: string, midway?: () => Promise<void>) {
    const gateways = instancesOf(stack!, 'gateway').map((instance) => instance.opsUrl);
    const via = (n: number): string => gateways[n % gateways.length]!;
    const ws = await stackWorkspace(stack!);
    const key = ws.apiKey.key;
    const project = (await timedCall(via(0), key, 'POST', '/v1/projects', { name: label })).body as { id: string; defaultListId: string };

    // Two endpoints: A answers 200, B fails every 7th request with 503 (so retries happen).
    const a = await startReceiver();
    const b = await startReceiver({ reply: (n) => (n % 7 === 0 ? 503 : 200) });
    receivers.push(a, b);
    for (const receiver of [a, b]) {
      const response = await timedCall(via(0), key, 'POST', '/v1/webhooks', { url: `${receiver.origin}/`, secret: `whsec_${randomBytes(12).toString('hex')}` });
      expect(response.status, response.text).toBe(201);
    }

    // The burst: 60 creations, then per task a rename and a completion, 12 in flight, alternating gateways.
    const TASKS = 60;
    const creations = await pool(
      Array.from({ length: TASKS }, (_, n) => () =>
        timedCall(via(n), key, 'POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: `t${n}` }),
      ),
      12,
    );
    const created = creations.filter((response) => response.status === 201).map((response) => response.body as { id: string; number: number });
    let killed = false;
    const changes: TimedResponse[] = await pool(
      created.flatMap((task, n) => [
        async () => {
          if (midway && !killed && n === Math.floor(created.length / 3)) {
            killed = true;
            await midway();
          }
          return timedCall(via(n), key, 'PATCH', `/v1/tasks/${task.id}`, { name: `t${n} renamed` });
        },
        () => timedCall(via(n + 1), key, 'PATCH', `/v1/tasks/${task.id}`, { isCompleted: true }),
      ]),
      12,
    );
    // The database's view: the tasks that exist (through either gateway, retrying a 503).
    let listed: Array<{ id: string; number: number }> = [];
    for (let tries = 0; tries < 20; tries++) {
      const response = await timedCall(via(tries), key, 'GET', `/v1/projects/${project.id}/tasks`);
      if (response.status === 200) {
        listed = response.body as typeof listed;
        break;
      }
      await sleep(500);
    }

    // Kafka: every task has its task.created; wait until the stream is complete and quiet.
    const eventsOfWs = (): CollectedEvent[] => collector.of(ws.workspace.id);
    const acknowledged = created.length + changes.filter((response) => response.status === 200).length;
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline && new Set(eventsOfWs().map((event) => event.id)).size < acknowledged) await sleep(250);
    await sleep(3_000);
    const events = eventsOfWs();
    const ids = new Set(events.map((event) => event.id));
    // Webhooks: each endpoint gets every distinct event id (duplicates only as retries of one id).
    const distinctAt = (receiver: TestReceiver) => new Set(receiver.requests.map((request) => String(request.headers['x-service-delivery'])));
    while (Date.now() < deadline + 60_000 && (distinctAt(a).size < ids.size || distinctAt(b).size < ids.size)) await sleep(250);
    await sleep(3_000);
    const successesPerId = (receiver: TestReceiver) =>
      countBy(receiver.requests.filter((request) => request.status >= 200 && request.status < 300), (request) => String(request.headers['x-service-delivery']));
    const doubleSuccess = (receiver: TestReceiver) => Object.values(successesPerId(receiver)).filter((count) => count > 1).length;

    const numbers = listed.map((task) => task.number);
    const summary = {
      creations: countBy(creations, (response) => response.status),
      changes: countBy(changes, (response) => response.status),
      tasks: listed.length,
      kafkaTotal: events.length,
      kafkaDistinct: ids.size,
      acknowledgedChanges: acknowledged,
      endpointA: { requests: a.requests.length, distinct: distinctAt(a).size, doubleSuccess: doubleSuccess(a) },
      endpointB: { requests: b.requests.length, distinct: distinctAt(b).size, doubleSuccess: doubleSuccess(b) },
    };
    console.log(`${label}: ${JSON.stringify(summary)}`);

    // No duplicate task numbers, no gaps among the tasks that exist.
    expect(new Set(numbers).size).toBe(numbers.length);
    // Every task that exists has exactly one task.created event id; every acknowledged change is on Kafka.
    for (const task of listed) {
      expect(new Set(events.filter((event) => event.taskId === task.id && event.event === 'task.created').map((event) => event.id)).size, task.id).toBe(1);
    }
    expect(ids.size).toBeGreaterThanOrEqual(acknowledged);
    // Each endpoint received every event id.
    expect([...ids].filter((id) => !distinctAt(a).has(id))).toEqual([]);
    expect([...ids].filter((id) => !distinctAt(b).has(id))).toEqual([]);
    // Per task, Kafka keeps the order: one partition, offsets increasing.
    for (const task of listed) {
      const own = events.filter((event) => event.taskId === task.id);
      expect(new Set(own.map((event) => event.partition)).size).toBe(1);
    }
    return { summary, events, ids, a, b, listed, created };
  }

  it('a burst through both gateways: every event once on Kafka, once per endpoint, distinct task numbers', async () => {
    const { summary, events, ids, a, b, listed, created } = await scenario('scale-out burst');
    expect(summary.creations).toEqual({ 201: 60 });
    expect(summary.changes).toEqual({ 200: 120 });
    expect(listed.map((task) => task.number).sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, n) => n + 1));
    expect(created.length).toBe(60);
    // Exactly once on Kafka: 60 created + 60 renamed + 60 completed, no id twice.
    expect(ids.size).toBe(180);
    expect(events.length).toBe(180);
    // Exactly one successful delivery per event and endpoint; B's extra requests are retries of a 503.
    expect(summary.endpointA.doubleSuccess).toBe(0);
    expect(summary.endpointB.doubleSuccess).toBe(0);
    expect(a.requests.length).toBe(180);
    expect(b.requests.filter((request) => request.status === 503).length).toBe(b.requests.length - 180);
  }, 240_000);

  it('plan limits hold across replicas: free plan, concurrent creations through both gateways', async () => {
    const gateways = instancesOf(stack!, 'gateway').map((instance) => instance.opsUrl);
    const ws = await stackWorkspace(stack!, 'free');
    const key = ws.apiKey.key;
    const projects = await pool(
      Array.from({ length: 12 }, (_, n) => () => timedCall(gateways[n % 2]!, key, 'POST', '/v1/projects', { name: `p${n}` })),
      12,
    );
    const project = projects.find((response) => response.status === 201)!.body as { id: string; defaultListId: string };
    const tasks = await pool(
      Array.from({ length: 320 }, (_, n) => () =>
        timedCall(gateways[n % 2]!, key, 'POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: `t${n}` }),
      ),
      24,
    );
    const numbers = tasks.filter((response) => response.status === 201).map((response) => (response.body as { number: number }).number);
    console.log(
      `plan limits across 2 replicas: projects ${JSON.stringify(countBy(projects, (response) => response.status))}, ` +
        `tasks ${JSON.stringify(countBy(tasks, (response) => response.status))}, ${new Set(numbers).size} distinct task numbers`,
    );
    expect(countBy(projects, (response) => response.status)).toEqual({ 201: 3, 403: 9 });
    expect(countBy(tasks, (response) => response.status)).toEqual({ 201: 300, 403: 20 });
    expect(numbers.sort((x, y) => x - y)).toEqual(Array.from({ length: 300 }, (_, n) => n + 1));
  }, 120_000);

  it('the same burst with one replica of each backend SIGKILLed midway: nothing lost, duplicates only with the same id', async () => {
    const victims = ['tasks', 'attachments', 'webhooks'] as const;
    let killedAt = 0;
    const { summary, events, ids } = await scenario('scale-out burst with SIGKILL', async () => {
      killedAt = Date.now();
      // Replica 0 of tasks holds the relay lock: kill that one, so the standby must take over.
      await Promise.all(victims.map((name) => instancesOf(stack!, name)[0]!.process.kill()));
    });
    expect(killedAt).toBeGreaterThan(0);
    const duplicates = events.length - ids.size;
    console.log(`scale-out SIGKILL: ${duplicates} duplicate event(s) on Kafka (same id), requests failed by the kill: ${JSON.stringify(summary.changes)}`);
    // Not every request survives a killed backend (in flight on it: 503), but most do.
    expect((summary.changes[200] ?? 0) + (summary.changes[503] ?? 0)).toBe(Object.values(summary.changes).reduce((x, y) => x + y, 0));
  }, 300_000);
});
