import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { IHeaders, KafkaMessage } from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import { createKafka } from './kafka.js';
import { encodeRecord, installKafkaRecordEncoder, type EncodedRecord, type RecordInput } from './kafka-record.js';
import { createLogger } from './logger.js';

// kafkajs's own encoder, taken before anything installs ours (this file does not load kafka.ts's
// createKafka until the broker test below, and the install swaps the module's export, not this function).
const kafkajsRecord = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/record/v0') as (input: RecordInput) => EncodedRecord;

/** A string of `length` characters drawn from ASCII, accented, CJK and astral (4-byte) ones. */
function text(length: number, seed: number): string {
  const alphabet = ['a', 'Z', '0', ' ', '-', 'é', 'ß', '中', '文', '😀', '\u0000'];
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[(seed * 31 + i * 7) % alphabet.length];
  return out;
}

describe('the Kafka record encoder (kafka-record.ts)', () => {
  it('writes the bytes kafkajs writes, for every shape of record a producer sends', () => {
    const inputs: RecordInput[] = [
      {},
      { key: null, value: null },
      { key: '', value: '' },
      { key: 'task-1', value: '{"id":1}', headers: {} },
      { key: Buffer.from('k'), value: Buffer.alloc(0), headers: { empty: '', nothing: Buffer.alloc(0) } },
      { offsetDelta: 63, timestampDelta: 64, key: 'x', value: 'y' }, // the one- and two-byte varint edge
      { offsetDelta: 8191, timestampDelta: 8192, key: 'x', value: 'y' },
      { offsetDelta: 0, timestampDelta: -1, value: 'negative delta' },
      { offsetDelta: 2 ** 30 - 1, timestampDelta: -(2 ** 30) + 1, value: 'largest deltas written here' },
      { timestampDelta: 2 ** 40, value: 'left to kafkajs: beyond 2^30' },
      { timestampDelta: Number.NaN, value: 'left to kafkajs: not an integer' },
      { headers: { many: ['a', Buffer.from('b'), 'c'], 'é-key': 'ünïcode', 'x-tws-event-id': randomUUID() } },
      { key: text(200, 3), value: text(70_000, 5), headers: { big: text(300, 7) } },
      { value: randomBytes(1 << 20), headers: { bin: randomBytes(1000) } },
    ];
    for (let seed = 0; seed < 200; seed += 1) {
      const headers: RecordInput['headers'] = {};
      for (let h = 0; h < seed % 7; h += 1) headers[text(1 + ((seed + h) % 20), seed + h)] = h % 2 === 0 ? text((seed * h) % 90, h) : randomBytes((seed * h) % 130);
      inputs.push({
        offsetDelta: seed * 37,
        timestampDelta: seed * seed * 101,
        key: seed % 5 === 0 ? null : text(seed % 40, seed),
        value: seed % 3 === 0 ? randomBytes(seed * 13) : text(seed * 11, seed),
        headers,
      });
    }
    for (const input of inputs) {
      const ours = encodeRecord(input);
      const theirs = kafkajsRecord(input).buffer;
      if (ours === undefined) {
        expect(Number.isInteger(input.timestampDelta) && Math.abs(input.timestampDelta!) < 2 ** 30).toBe(false);
        continue;
      }
      expect(ours.buf).toBe(ours.buffer);
      expect(ours.buffer.equals(theirs), `record ${JSON.stringify(input).slice(0, 200)}`).toBe(true);
    }
    expect(inputs.filter((input) => encodeRecord(input) === undefined)).toHaveLength(2);
  });

  it('leaves a header kafkajs would write from a number to kafkajs', () => {
    expect(encodeRecord({ value: 'v', headers: { n: 5 as unknown as string } })).toBeUndefined();
  });

  it('is what a producer made by createKafka sends: keys, values and headers come back from the broker as sent', async () => {
    const stack = inject('stack');
    const kafka = createKafka({ clientId: 'kafka-record-test', brokers: stack.kafkaBrokers, logger: createLogger('test', 'silent') });
    const topic = `kafka-record-test-${randomUUID()}`;
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    // Swapped in: the module kafkajs's produce request requires is ours now.
    expect(installKafkaRecordEncoder()).toBe(true);
    expect(createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/record/v0')).not.toBe(kafkajsRecord);

    const sent = Array.from({ length: 40 }, (_, i) => ({
      key: i % 4 === 0 ? null : `task-${i}`,
      value: i === 7 ? text(300_000, i) : JSON.stringify({ i, name: text(i * 3, i) }),
      headers: { 'x-tws-event-type': 'task.updated', 'x-tws-seq': String(i), ...(i % 2 === 0 ? { bin: Buffer.from([0, 255, i]), multi: ['a', 'b'] } : {}) },
      ...(i === 9 ? { timestamp: String(Date.now() - 5_000) } : {}),
    }));
    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: sent.slice(0, 20) });
    await producer.send({ topic, acks: -1, messages: sent.slice(20) });
    await producer.disconnect();

    const received: KafkaMessage[] = [];
    const consumer = kafka.consumer({ groupId: `kafka-record-test-${randomUUID()}` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const all = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          received.push(message);
          if (received.length === sent.length) resolve();
        },
      });
    });
    await all;
    await consumer.disconnect();

    const asText = (headers: IHeaders | undefined) =>
      Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name, Array.isArray(value) ? value.map(String) : value === undefined ? undefined : value.toString('latin1')]));
    received.forEach((message, i) => {
      const expected = sent[i]!;
      expect(message.key === null ? null : message.key.toString('utf8')).toBe(expected.key);
      expect(message.value?.toString('utf8')).toBe(expected.value);
      const { multi: _multi, bin, ...single } = expected.headers as Record<string, string | string[] | Buffer | undefined>;
      expect(asText(message.headers)).toEqual({
        ...single,
        ...(bin === undefined ? {} : { bin: (bin as Buffer).toString('latin1'), multi: ['a', 'b'] }),
      });
      if (i === 9) expect(message.timestamp).toBe(expected.timestamp);
    });
  });
});
