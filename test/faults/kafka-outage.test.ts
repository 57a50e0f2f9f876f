import { randomBytes } from 'node:crypto';
import type { Stack } from '@tws/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskEventCollector } from '../support/faults/kafka-collector.js';
import { countBy, instancesOf, isOk, sleep, stackWorkspace, startFaultStack, timedCall, type TimedResponse } from '../support/faults/stack.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';

const OUTAGE_MS = 30_000;
const BURST_MS = 45_000;
const CHANGES_PER_SECOND = 8;

/**
 * Kafka stopped for 30 s in the middle of a burst of task changes: the API keeps answering, every
 * service stays ready (readiness is what a pod can serve itself: in Kubernetes an unready webhooks
 * pod leaves its Service, and a gateway that required every backend would then leave too), the
 * events wait in the outbox, and once the broker is back every change is published exactly once
 * and delivered to the webhook endpoint (duplicates only as repeats of the same id).
 */
describe('Kafka outage during a burst of task changes', () => {
  let stack: Stack | undefined;
  let receiver: TestReceiver | undefined;

  beforeAll(async () => {
    stack = await startFaultStack('faults-kafka-outage', {
      extraEnv: { RATE_LIMIT_PER_SECOND: '0', OUTBOX_POLL_INTERVAL_MS: '500', OUTBOX_MAX_BACKOFF_MS: '2000' },
    });
  }, 300_000);
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  }, 120_000);

  async function outboxBacklog(): Promise<number> {
    const tasks = instancesOf(stack!, 'tasks')[0]!;
    const text = await (await fetch(`${tasks.opsUrl}/metrics`)).text();
    const line = text.split('\n').find((candidate) => candidate.startsWith('outbox_backlog_events'));
    return Number(line?.split(' ').pop() ?? Number.NaN);
  }

  /** The webhooks service's kafka_reachable gauge (Kafka's state is a metric, not a readiness check). */
  async function kafkaReachable(): Promise<number> {
    const webhooks = instancesOf(stack!, 'webhooks')[0]!;
    const text = await (await fetch(`${webhooks.opsUrl}/metrics`)).text();
    const line = text.split('\n').find((candidate) => candidate.startsWith('kafka_reachable'));
    return Number(line?.split(' ').pop() ?? Number.NaN);
  }

  it('keeps the API up, then publishes and delivers every change once the broker is back', async () => {
    const kafka = stack!.infra.kafka;
    expect(kafka, 'this test stops the broker it started (not an external KAFKA_BROKERS)').toBeDefined();
    const gateway = stack!.services.gatewayUrl;
    const ws = await stackWorkspace(stack!);
    const key = ws.apiKey.key;
    receiver = await startReceiver();
    const registered = await timedCall(gateway, key, 'POST', '/v1/webhooks', {
      url: `${receiver.origin}/`,
      secret: `whsec_${randomBytes(12).toString('hex')}`,
      events: ['task.updated'],
    });
    expect(registered.status, registered.text).toBe(201);
    const project = (await timedCall(gateway, key, 'POST', '/v1/projects', { name: 'Outage burst' })).body as { id: string; defaultListId: string };
    const tasks: Array<{ id: string }> = [];
    for (let n = 0; n < 10; n++) {
      const created = await timedCall(gateway, key, 'POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: `task ${n}` });
      expect(created.status, created.text).toBe(201);
      tasks.push(created.body as { id: string });
    }

    // The burst: renames at a fixed rate for 45 s; Kafka goes down 5 s in, for 30 s.
    const changes: Array<TimedResponse & { duringOutage: boolean }> = [];
    let outage = false;
    const burstStart = Date.now();
    const burst = (async () => {
      for (let n = 0; Date.now() - burstStart < BURST_MS; n++) {
        const task = tasks[n % tasks.length]!;
        const duringOutage = outage;
        const response = await timedCall(gateway, key, 'PATCH', `/v1/tasks/${task.id}`, { name: `rename ${n}` });
        changes.push({ ...response, duringOutage });
        await sleep(Math.max(0, burstStart + ((n + 1) * 1000) / CHANGES_PER_SECOND - Date.now()));
      }
    })();
    await sleep(5_000);
    outage = true;
    const stoppedAt = Date.now();
    await kafka!.stopServer();
    let backlogPeak = 0;
    const probes: Array<{ name: string; ok: boolean }> = [];
    const reads: TimedResponse[] = [];
    while (Date.now() - stoppedAt < OUTAGE_MS) {
      backlogPeak = Math.max(backlogPeak, await outboxBacklog());
      for (const instance of stack!.services.instances) {
        probes.push({ name: `${instance.name}-${instance.replica}`, ok: await isOk(`${instance.opsUrl}/readyz`, 2_500) });
      }
      reads.push(await timedCall(gateway, key, 'GET', `/v1/tasks/${tasks[0]!.id}`));
      reads.push(await timedCall(gateway, key, 'GET', '/v1/webhooks'));
      await sleep(1_000);
    }
    const reachableDuringOutage = await kafkaReachable();
    await kafka!.startServer();
    outage = false;
    const restartedAt = Date.now();
    await burst;

    // Every acknowledged change is published once the broker is back.
    const acknowledged = changes.filter((change) => change.status === 200).length;
    let drainedAt = 0;
    const drainDeadline = Date.now() + 120_000;
    while (Date.now() < drainDeadline) {
      if ((await outboxBacklog()) === 0) {
        drainedAt = Date.now();
        break;
      }
      await sleep(250);
    }
    let reachableAfter = await kafkaReachable();
    for (const until = Date.now() + 60_000; reachableAfter !== 1 && Date.now() < until; reachableAfter = await kafkaReachable()) await sleep(1_000);
    const collector = await TaskEventCollector.start(stack!.infra.kafkaBrokers);
    try {
      const updates = () => collector.of(ws.workspace.id).filter((event) => event.event === 'task.updated');
      const published = Date.now() + 60_000;
      while (Date.now() < published && new Set(updates().map((event) => event.id)).size < acknowledged) await sleep(250);
      const events = updates();
      const ids = new Set(events.map((event) => event.id));
      const delivered = () => new Set(receiver!.requests.map((request) => String(request.headers['x-service-delivery'])));
      const deliveredBy = Date.now() + 120_000;
      while (Date.now() < deliveredBy && [...ids].some((id) => !delivered().has(id))) await sleep(250);

      const summary = {
        outageSeconds: OUTAGE_MS / 1000,
        changes: countBy(changes, (change) => change.status),
        changesDuringOutage: countBy(changes.filter((change) => change.duringOutage), (change) => change.status),
        outboxBacklogPeak: backlogPeak,
        drainedSecondsAfterRestart: drainedAt ? (drainedAt - restartedAt) / 1000 : null,
        kafkaEvents: events.length,
        kafkaDistinctIds: ids.size,
        readinessDuringOutage: countBy(probes, (probe) => `${probe.name} ${probe.ok ? 'ready' : 'NOT READY'}`),
        readsDuringOutage: countBy(reads, (read) => read.status),
        kafkaReachable: { duringOutage: reachableDuringOutage, after: reachableAfter },
        webhookRequests: receiver!.requests.length,
        webhookDistinctIds: delivered().size,
      };
      console.log(`kafka outage: ${JSON.stringify(summary)}`);

      // Every gateway, tasks, attachments and webhooks replica stayed ready through the outage.
      expect(probes.length).toBeGreaterThan(0);
      expect(probes.filter((probe) => !probe.ok)).toEqual([]);
      // Kafka's state shows in the webhooks service's metrics instead.
      expect(summary.kafkaReachable).toEqual({ duringOutage: 0, after: 1 });
      // The API kept answering through the outage: reads (tasks, webhooks from Postgres), and every change was accepted.
      expect(summary.readsDuringOutage).toEqual({ 200: reads.length });
      expect(changes.filter((change) => change.duringOutage).length).toBeGreaterThan(100);
      expect(summary.changes).toEqual({ 200: changes.length });
      expect(backlogPeak).toBeGreaterThan(100);
      expect(drainedAt).toBeGreaterThan(0);
      // Exactly once on Kafka: one event per acknowledged change, no id twice.
      expect(ids.size).toBe(acknowledged);
      expect(events.length).toBe(acknowledged);
      // Every event reached the endpoint; repeats (if any) carry an id already seen.
      expect([...ids].filter((id) => !delivered().has(id))).toEqual([]);
      expect([...delivered()].filter((id) => !ids.has(id))).toEqual([]);
    } finally {
      await collector.stop();
    }
  }, 420_000);
  it('a backend down: every gateway stays ready, the other routes serve, its own routes answer 503 {"error"}', async () => {
    const gateways = instancesOf(stack!, 'gateway');
    const webhooks = instancesOf(stack!, 'webhooks');
    const ws = await stackWorkspace(stack!);
    const key = ws.apiKey.key;
    const gateway = stack!.services.gatewayUrl;
    await Promise.all(webhooks.map((instance) => instance.process.stop()));

    for (const instance of gateways) expect(await isOk(`${instance.opsUrl}/readyz`), `${instance.name}-${instance.replica} /readyz`).toBe(true);
    const project = await timedCall(gateway, key, 'POST', '/v1/projects', { name: 'Webhooks down' });
    expect(project.status, project.text).toBe(201);
    const listed = await timedCall(gateway, key, 'GET', '/v1/projects');
    expect(listed.status, listed.text).toBe(200);
    const hooks = await timedCall(gateway, key, 'GET', '/v1/webhooks');
    expect({ status: hooks.status, body: hooks.body }).toEqual({ status: 503, body: { error: expect.any(String) } });
    for (const instance of gateways) expect(await isOk(`${instance.opsUrl}/readyz`), `${instance.name}-${instance.replica} /readyz`).toBe(true);
  }, 60_000);
});
