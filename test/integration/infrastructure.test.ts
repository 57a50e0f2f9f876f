import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { installKafkaRequestQueueFix } from '@tws/common/kafka-request-queue';
import pg from 'pg';
import { stackS3Client } from '../support/s3.js';

// As in the services (createKafka): no 1 ms timer in each open kafkajs connection (kafka-request-queue.ts).
installKafkaRequestQueueFix();

const stack = inject('stack');

describe('launched infrastructure', () => {
  it('PostgreSQL answers queries and holds the service schemas', async () => {
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: string }>('SELECT version()');
      expect(rows[0]?.version).toMatch(/^PostgreSQL \d+/);
      const schemas = await client.query<{ schema_name: string }>(
        "SELECT schema_name FROM information_schema.schemata WHERE schema_name IN ('tasks','attachments','webhooks') ORDER BY 1",
      );
      expect(schemas.rows.map((row) => row.schema_name)).toEqual(['attachments', 'tasks', 'webhooks']);
    } finally {
      await client.end();
    }
  });

  it('kafkajs produces to and consumes from the launched broker', async () => {
    const kafka = new Kafka({ brokers: stack.kafkaBrokers, clientId: 'infra-test', logLevel: logLevel.NOTHING });
    const topic = `infra-test-${randomUUID()}`;
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();

    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    const sent = Array.from({ length: 5 }, (_, index) => ({ key: 'k', value: `message-${index}` }));
    await producer.send({ topic, acks: -1, messages: sent });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId: `infra-test-${randomUUID()}` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const received: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`received only ${received.length} of 5`)), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          received.push(message.value?.toString() ?? '');
          if (received.length === sent.length) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    await consumer.disconnect();
    expect(received).toEqual(sent.map((message) => message.value));
  });

  it('minio puts and gets an object on the launched MinIO', async () => {
    const minio = stackS3Client();
    const bucket = `infra-test-${Date.now()}`;
    await minio.makeBucket(bucket, 'us-east-1');
    const body = Buffer.from(`hello ${randomUUID()}`);
    await minio.putObject(bucket, 'greeting.txt', body, body.length, { 'Content-Type': 'text/plain' });
    const stream = await minio.getObject(bucket, 'greeting.txt');
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(body)).toBe(true);
    const stat = await minio.statObject(bucket, 'greeting.txt');
    expect(stat.size).toBe(body.length);
  });
});
