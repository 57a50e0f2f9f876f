import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer, Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adaptFetchWhenIdle, adaptiveFetch, type AdaptiveFetchPolicy } from './kafka-adaptive-fetch.js';
import { createKafka } from './kafka.js';
import { createLogger } from './logger.js';

const records = { isEmptyIncludingFiltered: () => false };
const none = { isEmptyIncludingFiltered: () => true };

/** A consumer group as kafkajs keeps it, whose fetch records the settings it ran with and returns what the test scripts. */
function group(groupId: string, script: Array<Array<typeof records>>) {
  const seen: Array<{ minBytes: number; maxWaitTime: number }> = [];
  const self = { groupId, minBytes: 32 * 1024, maxWaitTime: 25 };
  const policy: AdaptiveFetchPolicy = { idleWaitMs: 500 };
  const fetch = adaptiveFetch(
    async function (this: typeof self) {
      seen.push({ minBytes: this.minBytes, maxWaitTime: this.maxWaitTime });
      return script.shift() ?? [];
    },
    (id) => (id === 'adaptive' ? policy : undefined),
  );
  return { self, seen, fetch: () => fetch.call(self, 0) };
}

describe('adaptive fetch: the mode', () => {
  it('batches after records, waits long for one byte after an empty answer, and keeps the mode when no broker answered', async () => {
    const { seen, fetch } = group('adaptive', [[records], [none, none], [], [none], [none, records], [records]]);
    for (let i = 0; i < 7; i += 1) await fetch();
    const busy = { minBytes: 32 * 1024, maxWaitTime: 25 };
    const idle = { minBytes: 1, maxWaitTime: 500 };
    expect(seen).toEqual([
      busy, // as the consumer was made
      busy, // after records
      idle, // after a broker's empty answer
      idle, // no broker asked (paused partitions): as it was
      idle, // empty again
      busy, // one partition brought records
      busy,
    ]);
  });

  it('leaves a group without a policy as kafkajs made it', async () => {
    const { self, seen, fetch } = group('other', [[none], [none]]);
    await fetch();
    await fetch();
    expect(seen).toEqual([
      { minBytes: 32 * 1024, maxWaitTime: 25 },
      { minBytes: 32 * 1024, maxWaitTime: 25 },
    ]);
    expect(self).toMatchObject({ minBytes: 32 * 1024, maxWaitTime: 25 });
  });

  it('refuses an idle wait that is not a positive whole number of milliseconds', () => {
    expect(() => adaptFetchWhenIdle('g', { idleWaitMs: 0 })).toThrow(/idleWaitMs/);
    expect(() => adaptFetchWhenIdle('g', { idleWaitMs: 2.5 })).toThrow(/idleWaitMs/);
  });
});

/**
 * Against the test stack's broker: two consumers made alike (32 KiB or 25 ms), one of them in an
 * adaptive group. Idle, the other fetches ~40 times a second; the adaptive one waits for a record.
 */
describe('adaptive fetch against the broker', () => {
  const idleWaitMs = 3_000;
  let kafka: Kafka;
  const topic = `adaptive-fetch-${randomUUID()}`;
  const consumers: Consumer[] = [];

  async function consumer(groupId: string, onMessage: (value: string) => void) {
    const made = kafka.consumer({ groupId, minBytes: 32 * 1024, maxWaitTimeInMs: 25, sessionTimeout: 10_000 });
    consumers.push(made);
    const fetches: number[] = [];
    let joined = false;
    made.on(made.events.FETCH, () => void fetches.push(performance.now()));
    made.on(made.events.GROUP_JOIN, () => void (joined = true));
    await made.connect();
    await made.subscribe({ topic, fromBeginning: true });
    await made.run({ eachMessage: async ({ message }) => onMessage(message.value?.toString() ?? '') });
    const deadline = Date.now() + 30_000;
    while (!joined || fetches.length === 0) {
      if (Date.now() > deadline) throw new Error(`${groupId} did not join and fetch within 30 s`);
      await sleep(50);
    }
    return { fetchesSince: (since: number) => fetches.filter((at) => at >= since).length };
  }

  beforeAll(async () => {
    // createKafka installs the wrapper, as in the services.
    kafka = createKafka({ clientId: 'adaptive-fetch-test', brokers: inject('stack').kafkaBrokers, logger: createLogger('test', 'silent') });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
  }, 60_000);

  afterAll(async () => {
    await Promise.all(consumers.map((made) => made.disconnect()));
  });

  it('fetches a few times a second idle instead of forty, and still hands a record over as it arrives', async () => {
    const adaptiveGroup = `adaptive-fetch-${randomUUID()}`;
    adaptFetchWhenIdle(adaptiveGroup, { idleWaitMs });
    const received = new Map<string, number>();
    const adaptive = await consumer(adaptiveGroup, (value) => received.set(value, performance.now()));
    const plain = await consumer(`plain-fetch-${randomUUID()}`, () => {});

    const since = performance.now();
    await sleep(2_000);
    // Idle for 2 s: the plain group's fetches end every 25 ms; the adaptive one's wait up to 3 s each.
    expect(plain.fetchesSince(since)).toBeGreaterThan(20);
    expect(adaptive.fetchesSince(since)).toBeLessThanOrEqual(2);

    // A record for an idle adaptive group: the broker answers its one-byte fetch at once, not after 3 s.
    const producer = kafka.producer();
    await producer.connect();
    const sentAt = performance.now();
    await producer.send({ topic, acks: -1, messages: [{ value: 'after the quiet spell' }] });
    await producer.disconnect();
    const deadline = Date.now() + 10_000;
    while (!received.has('after the quiet spell') && Date.now() < deadline) await sleep(10);
    expect(received.get('after the quiet spell')! - sentAt).toBeLessThan(idleWaitMs / 2);
  }, 90_000);
});
