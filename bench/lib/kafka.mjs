// Kafka as the bench sees it: a client of the stack's broker, the wait until the event pipeline is
// idle (outbox published, webhooks consumer caught up), and a tap that stamps when each marked change
// reached task-events. Topic and group names come from @tws/contracts.
import { taskEventsTopic, webhookConsumerGroups } from '@tws/contracts';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { wallToMonotonicMs } from './clock.mjs';
import { log } from './log.mjs';

export const kafkaOf = (stack, clientId) => new Kafka({ clientId, brokers: stack.infra.kafkaBrokers, logLevel: logLevel.NOTHING });

/** Unpublished outbox rows and the webhooks consumer group's lag on task-events. */
async function backlog(db, admin) {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM tasks.outbox WHERE published_at IS NULL AND rejected_at IS NULL');
  const ends = await admin.fetchTopicOffsets(taskEventsTopic);
  const committed = await admin.fetchOffsets({ groupId: webhookConsumerGroups.events, topics: [taskEventsTopic] }).catch(() => []);
  const done = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  const lag = ends.reduce((sum, p) => sum + Math.max(0, Number(p.high) - Math.max(0, done.get(p.partition) ?? 0)), 0);
  return { outbox: rows[0].n, lag };
}

/**
 * Waits (at most `timeoutMs`, then goes on) until the outbox is empty and the webhooks consumer has
 * caught up. `quiet` (between the slices of one API row): no progress lines, and a closer look
 * (every 250 ms, not every 2 s).
 */
export async function waitForPipelineIdle(stack, what, timeoutMs = 120_000, { quiet = false } = {}) {
  const db = new pg.Client({ connectionString: stack.infra.databaseUrl });
  await db.connect();
  const admin = kafkaOf(stack, 'bench').admin();
  await admin.connect();
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const { outbox, lag } = await backlog(db, admin);
      if (outbox === 0 && lag === 0) {
        if (!quiet) log(`${what}: outbox empty, webhooks consumer caught up`);
        return;
      }
      if (Date.now() > deadline) {
        log(`${what}: still ${outbox} unpublished outbox rows, consumer lag ${lag} after ${timeoutMs / 1000} s; going on`);
        return;
      }
      if (!quiet) log(`${what}: waiting (outbox ${outbox} unpublished, webhooks consumer lag ${lag})`);
      await sleep(quiet ? 250 : 2_000);
    }
  } finally {
    await admin.disconnect();
    await db.end();
  }
}

/**
 * Waits (at most `timeoutMs`, then goes on) until both webhooks consumer groups are stable with
 * `members` members. A replica started for the webhook runs joins its groups some seconds after it
 * is ready, and each join stops every member's consumption until the group is stable again (up to a
 * heartbeat interval, 3 s, to notice): a warm-up that began during it started seconds behind.
 */
export async function waitForStableGroups(stack, members, timeoutMs = 60_000) {
  const admin = kafkaOf(stack, 'bench').admin();
  await admin.connect();
  const groupIds = Object.values(webhookConsumerGroups);
  const started = performance.now();
  try {
    for (;;) {
      const { groups } = await admin.describeGroups(groupIds);
      const unsettled = groups.filter((group) => group.state !== 'Stable' || group.members.length !== members);
      if (unsettled.length === 0) {
        log(`webhooks: consumer groups stable with ${members} members each (${Math.round(performance.now() - started)} ms)`);
        return;
      }
      if (performance.now() - started > timeoutMs) {
        log(`webhooks: consumer groups not stable after ${timeoutMs / 1000} s (${unsettled.map((group) => `${group.groupId} ${group.state}, ${group.members.length} members`).join('; ')}); going on`);
        return;
      }
      await sleep(250);
    }
  } finally {
    await admin.disconnect();
  }
}

/**
 * When each change reached Kafka, which splits the event-to-delivery latency into tasks (commit →
 * relay → Kafka) and webhooks (Kafka → receiver): the record's timestamp (CreateTime, set by the
 * tasks service's producer), on this process's clock. A tap on task-events (own group) reads it for
 * every record whose payload holds `marker` followed by a sequence number below `count`; the time
 * comes from the record, not from when the tap fetched it (converted then: lib/clock.mjs), so the tap
 * fetches lazily. Resolves once the tap has joined its group (or after 15 s); `inKafkaAt[seq]` fills
 * in as records arrive.
 */
export async function tapTaskEvents(kafka, { groupId, marker, count }) {
  const inKafkaAt = new Array(count).fill(null);
  const tap = kafka.consumer({ groupId, maxWaitTimeInMs: 500, minBytes: 256 * 1024 });
  await tap.connect();
  await tap.subscribe({ topic: taskEventsTopic, fromBeginning: false });
  let tapReady;
  const tapAssigned = new Promise((resolve) => (tapReady = resolve));
  tap.on(tap.events.GROUP_JOIN, () => tapReady());
  const marked = Buffer.from(marker);
  void tap.run({
    eachMessage: async ({ message }) => {
      const value = message.value;
      const found = value ? value.indexOf(marked) : -1;
      if (found < 0) return;
      let seq = 0;
      for (let i = found + marked.length; value[i] >= 0x30 && value[i] <= 0x39; i += 1) seq = seq * 10 + value[i] - 0x30;
      if (seq < count) inKafkaAt[seq] ??= wallToMonotonicMs(Number(message.timestamp));
    },
  });
  await Promise.race([tapAssigned, sleep(15_000)]);
  await sleep(500);
  return { inKafkaAt, stop: () => tap.disconnect() };
}
