import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPool, type Pool } from '@tws/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WebhooksFeed } from '../support/webhooks/feed.js';
import { taskEventMessage } from '../support/webhooks/fixtures.js';
import { startReceiver } from '../support/webhooks/receiver.js';
import { taskEventsTopic } from '@tws/contracts';

/**
 * An endpoint's backlog ends while its load goes on. The endpoint answers slowly for a few seconds
 * (3 s an attempt), so its deliveries are parked; then it answers at once, and the events keep coming
 * at 200 a second over 40 tasks. Event order binds a task's first attempts only, so each task leaves
 * the backlog once the drainer reached its last parked delivery: by the last seconds of the feed the
 * endpoint has nothing parked. (Behind the endpoint's whole backlog, a fan-out found the deliveries the
 * drainer had handed out and not logged yet, parked its own too, and the backlog lasted as long as the
 * load.) Every event arrives, each task's in event order. And, the rule itself: a task whose backlog
 * is held (its drain lease taken by the test) holds back no other task's deliveries to the endpoint.
 */
const RATE = 200;
const TASKS = 40;
const SLOW_SECONDS = 4;
const FAST_SECONDS = 14;
/** The last seconds of the feed, in which nothing may be parked. */
const CALM_SECONDS = 5;

describe('an endpoint\'s backlog holds back only its own tasks, and ends under steady load', () => {
  let feed: WebhooksFeed;
  let pool: Pool;
  const secret = `whsec_${randomBytes(12).toString('hex')}`;

  beforeAll(async () => {
    feed = await WebhooksFeed.open();
    pool = createPool({ url: inject('stack').databaseUrl, schema: 'webhooks', applicationName: 'webhooks-backlog-exit-test', max: 1 });
  });
  afterAll(async () => {
    await feed?.close();
    await pool?.end();
  });

  it('a task whose backlog is not drained yet holds back only its own first attempts, which then go out in order', async () => {
    const workspaceId = randomUUID();
    const held = await startReceiver();
    const endpointId = await feed.register(workspaceId, held, secret);
    // Task X has a delivery parked at the endpoint, whose drain the test holds (the endpoint's lease
    // under its own owner, as an older replica's would be): its backlog stays while the events go.
    const taskX = randomUUID();
    const parkedEvent = taskEventMessage({ workspaceId, kind: 'task.updated', taskId: taskX, name: 'x 0' });
    await pool.query(`INSERT INTO backlog_leases (endpoint_id, owner, expires_at) VALUES ($1, 'backlog-exit-test', now() + interval '5 minutes')`, [endpointId]);
    await pool.query(
      `WITH ev AS (INSERT INTO events (id, workspace_id, type, task_id, payload) VALUES ($1, $2, 'task.updated', $3, convert_to($4, 'UTF8')) RETURNING id)
       INSERT INTO deliveries (id, endpoint_id, event_id, parked, backlog_shard, task_key)
       SELECT gen_random_uuid(), $5, ev.id, true, (hashtext($3) & 2147483647) % 8, hashtext($3) FROM ev`,
      [parkedEvent.payload.id, workspaceId, taskX, parkedEvent.message.value, endpointId],
    );
    const others = Array.from({ length: 10 }, () => randomUUID());
    const messages = [
      taskEventMessage({ workspaceId, kind: 'task.updated', taskId: taskX, name: 'x 1' }),
      ...others.map((task) => taskEventMessage({ workspaceId, kind: 'task.updated', taskId: task, name: 'o 1' })),
      taskEventMessage({ workspaceId, kind: 'task.updated', taskId: taskX, name: 'x 2' }),
      ...others.map((task) => taskEventMessage({ workspaceId, kind: 'task.updated', taskId: task, name: 'o 2' })),
    ];
    for (const { message } of messages) await feed.producer.send({ topic: taskEventsTopic, acks: -1, messages: [message] });
    const names = () => held.requests.map((request) => (JSON.parse(request.body.toString('utf8')) as { data: { id: string; name: string } }).data);

    // The other tasks' events all arrive, each task's in order; none of X's.
    await held.waitFor(2 * others.length, 20_000);
    await sleep(500);
    expect(names().filter((data) => data.id === taskX)).toEqual([]);
    for (const task of others) expect(names().filter((data) => data.id === task).map((data) => data.name)).toEqual(['o 1', 'o 2']);
    // X's new deliveries were parked behind its backlog.
    const parked = await pool.query<{ n: string }>('SELECT count(*) AS n FROM deliveries WHERE endpoint_id = $1 AND parked', [endpointId]);
    expect(Number(parked.rows[0]?.n)).toBe(3);

    // The drain lease is given back: the stack's drainer attempts X's backlog, oldest first.
    await pool.query(`DELETE FROM backlog_leases WHERE endpoint_id = $1 AND owner = 'backlog-exit-test'`, [endpointId]);
    await held.waitFor(2 * others.length + 3, 20_000);
    expect(names().filter((data) => data.id === taskX).map((data) => data.name)).toEqual(['x 0', 'x 1', 'x 2']);
  }, 120_000);

  it('parks while the endpoint is slow, parks nothing once the drainer caught up, and keeps each task in order', async () => {
    let slow = true;
    const workspaceId = randomUUID();
    const receiver = await startReceiver({ reply: () => (slow ? { status: 200, delayMs: 3_000 } : 200) });
    const endpointId = await feed.register(workspaceId, receiver, secret);
    const parkedNow = async () =>
      Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM deliveries WHERE endpoint_id = $1 AND parked', [endpointId])).rows[0]?.n);

    const tasks = Array.from({ length: TASKS }, () => randomUUID());
    const sent: Array<{ task: string; n: number }> = [];
    const sends: Array<Promise<unknown>> = [];
    await feed.producer.send({ topic: taskEventsTopic, acks: -1, messages: [taskEventMessage({ workspaceId: randomUUID(), kind: 'task.updated' }).message] });
    const total = RATE * (SLOW_SECONDS + FAST_SECONDS);
    const started = Date.now();
    let mostParked = 0;
    const calmSamples: number[] = [];
    let sampling = Promise.resolve();
    for (let tick = 0; tick < total; tick++) {
      if (tick === RATE * SLOW_SECONDS) slow = false;
      const task = tasks[tick % TASKS]!;
      sent.push({ task, n: tick });
      const event = taskEventMessage({ workspaceId, kind: 'task.updated', taskId: task, name: `n ${tick}` });
      sends.push(feed.producer.send({ topic: taskEventsTopic, acks: -1, messages: [event.message] }));
      // Ten samples a second of what the endpoint has parked; those of the calm seconds are kept.
      if (tick % (RATE / 10) === 0) {
        const calm = tick >= total - RATE * CALM_SECONDS;
        sampling = sampling.then(async () => {
          const parked = await parkedNow();
          mostParked = Math.max(mostParked, parked);
          if (calm) calmSamples.push(parked);
        });
      }
      const next = started + ((tick + 1) * 1000) / RATE;
      await sleep(Math.max(0, next - Date.now()));
    }
    await Promise.all(sends);
    await sampling;

    // Every event arrives once, and each task's in event order (every attempt a first one: all answered 200).
    await receiver.waitFor(total, 120_000);
    const received = receiver.requests.map((request) => JSON.parse(request.body.toString('utf8')) as { data: { id: string; name: string } });
    expect(received).toHaveLength(total);
    const byTask = new Map<string, number[]>();
    for (const { data } of received) byTask.set(data.id, [...(byTask.get(data.id) ?? []), Number(data.name.slice(2))]);
    for (const task of tasks) {
      const expected = sent.filter((event) => event.task === task).map((event) => event.n);
      expect(byTask.get(task)).toEqual(expected);
    }
    console.log(
      `backlog exit: ${total} events over ${TASKS} tasks at ${RATE}/s; the endpoint slow for ${SLOW_SECONDS} s: up to ${mostParked} parked; ` +
        `parked in the last ${CALM_SECONDS} s of the feed (10 samples a second): ${calmSamples.join(' ')}`,
    );
    // The slow seconds parked deliveries (the backlog this test is about), and the calm ones none.
    expect(mostParked).toBeGreaterThan(50);
    expect(calmSamples).toHaveLength(CALM_SECONDS * 10);
    expect(calmSamples.every((parked) => parked === 0)).toBe(true);
  }, 240_000);
});
