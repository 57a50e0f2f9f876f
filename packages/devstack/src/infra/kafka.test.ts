import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { installKafkaRequestQueueFix } from '@tws/common/kafka-request-queue';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../processes.js';
import { startKafka } from './kafka.js';

// As in the services (createKafka): no 1 ms timer in each open kafkajs connection (kafka-request-queue.ts).
installKafkaRequestQueueFix();

describe('startKafka', () => {
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'tws-kafka-test-'));
  // Holds the port; probes that reach it while the first attempt fails are dropped.
  const holder = net.createServer((socket) => socket.destroy());
  afterAll(async () => {
    await new Promise((resolve) => holder.close(resolve));
    rmSync(logDir, { recursive: true, force: true });
  });

  it('starts again on new ports when a chosen port is taken before the broker binds it', async () => {
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as net.AddressInfo).port;
    let calls = 0;
    // The first port handed out (the broker's) is already in use, as if another connection had taken it.
    const kafka = await startKafka(logDir, { choosePort: async () => (calls++ === 0 ? taken : freePort()) });
    try {
      expect(readFileSync(path.join(logDir, 'kafka.log'), 'utf8')).toContain('Address already in use');
      expect(kafka.brokers).toHaveLength(1);
      expect(kafka.brokers[0]).not.toBe(`127.0.0.1:${taken}`);
      const admin = new Kafka({ brokers: kafka.brokers, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      const cluster = await admin.describeCluster();
      await admin.disconnect();
      expect(cluster.brokers.map((broker) => `${broker.host}:${broker.port}`)).toEqual(kafka.brokers);
    } finally {
      await kafka.stop();
    }
  }, 120_000);
});
