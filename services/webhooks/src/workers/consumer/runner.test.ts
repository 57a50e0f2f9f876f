import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '@tws/common';
import { waitUntil } from '@tws/devstack';
import { Registry } from 'prom-client';
import { Kafka, logLevel, PartitionAssigners, type Consumer } from 'kafkajs';
import { installKafkaRequestQueueFix } from '@tws/common/kafka-request-queue';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWebhookMetrics } from '../../metrics.js';
import { TrackedConsumer, type IncomingMessage } from './runner.js';

// As in the services (createKafka): no 1 ms timer in each open kafkajs connection (kafka-request-queue.ts).
installKafkaRequestQueueFix();

/**
 * Against the test stack's Kafka. A consumer group whose other member speaks another assignment
 * protocol refuses to let a member join (INCONSISTENT_GROUP_PROTOCOL, not retriable): kafkajs then
 * reports a crash it does not restart from, as it does after "Failed to find group coordinator"
 * when the broker goes away. The runner must start that consumer again itself.
 */
describe('TrackedConsumer after a crash kafkajs does not restart', () => {
  const kafka = new Kafka({ clientId: 'runner-test', brokers: inject('stack').kafkaBrokers, logLevel: logLevel.NOTHING });
  const topic = `runner-restart-${randomUUID()}`;
  const groupId = `runner-restart-${randomUUID()}`;
  let blocker: Consumer | undefined;

  beforeAll(async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
  });
  afterAll(async () => {
    await blocker?.disconnect();
  });

  it('starts the consumer again, and it consumes once the group lets it join', async () => {
    // The first member: round robin under another protocol name.
    blocker = kafka.consumer({
      groupId,
      sessionTimeout: 10_000,
      partitionAssigners: [
        (config) => {
          const assigner = PartitionAssigners.roundRobin(config);
          return { ...assigner, name: 'Blocker', protocol: ({ topics }) => ({ ...assigner.protocol({ topics }), name: 'Blocker' }) };
        },
      ],
    });
    let blockerJoined = false;
    blocker.on(blocker.events.GROUP_JOIN, () => void (blockerJoined = true));
    await blocker.connect();
    await blocker.subscribe({ topic, fromBeginning: true });
    await blocker.run({ eachMessage: async () => {} });
    await waitUntil('the blocker joined the group', async () => blockerJoined, { timeoutMs: 30_000, intervalMs: 100 });

    const logLines: Array<{ msg?: string; restart?: boolean }> = [];
    const logger = createLogger(
      'runner-test',
      'info',
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          logLines.push(JSON.parse(chunk.toString()) as { msg?: string; restart?: boolean });
          callback();
        },
      }),
    );
    const received: IncomingMessage[] = [];
    const consumer = new TrackedConsumer({
      kafka,
      groupId,
      topics: [topic],
      logger,
      metrics: createWebhookMetrics(new Registry()),
      handler: {
        accept: async (messages) => {
          received.push(...messages);
          return { settled: messages.map(() => Promise.resolve()) };
        },
        saturated: () => false,
      },
    });
    try {
      await consumer.start();
      // Refused by the group: a crash kafkajs does not restart from.
      await waitUntil('the crash kafkajs does not restart from', async () => logLines.some((line) => line.msg === 'consumer crashed' && line.restart === false), { timeoutMs: 30_000, intervalMs: 100 });
      await blocker.disconnect();
      blocker = undefined;
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic, messages: [{ key: 'k', value: 'after the crash' }] });
      await producer.disconnect();
      // Only a consumer started again can read it.
      await waitUntil('a message consumed after the restart', async () => received.length > 0, { timeoutMs: 60_000, intervalMs: 100 });
      expect(received.map(({ message }) => message.value?.toString())).toEqual(['after the crash']);
      expect(logLines.some((line) => line.msg === 'starting the crashed consumer again')).toBe(true);
    } finally {
      await consumer.stop(5_000);
    }
  }, 150_000);
});
