import { randomUUID } from 'node:crypto';
import { taskEventsTopic } from '@tws/contracts';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { expect } from 'vitest';
import { pollUntil, TIMESTAMP } from './fixtures.js';

/*
 * What the task-event suites (test/e2e/events*.test.ts) read task-events.v1 with, and the checks
 * they make of each event: the contract's payload and headers, and each task's order.
 */

const topic = taskEventsTopic;
const EVENT_ID = /^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DATA_KEYS = ['assigneeId', 'createdAt', 'id', 'isCompleted', 'labels', 'listId', 'name', 'number', 'projectId', 'statusId'];

export interface Payload {
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

export interface Received {
  key: string;
  headers: Record<string, string>;
  partition: number;
  offset: bigint;
  payload: Payload;
  raw: string;
}

/** Reads task-events.v1 from the beginning with its own consumer group and keeps every message. */
export class EventCollector {
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

export type Expected = [Payload['event'], Partial<Payload['data']>];

/** Every event is the contract's payload for this task, with the event id and kind in headers. */
export function checkEnvelope(event: Received, task: { id: string; number: number; projectId: string; createdAt: string }, workspaceId: string): void {
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

export function checkSequence(events: Received[], expected: Expected[]): void {
  expect(events.map((event) => event.payload.event)).toEqual(expected.map(([kind]) => kind));
  expected.forEach(([, data], index) => expect(events[index]!.payload.data).toMatchObject(data));
  // One partition, increasing offsets: Kafka keeps the task's order for every consumer.
  expect(new Set(events.map((event) => event.partition)).size).toBe(1);
  for (let index = 1; index < events.length; index++) expect(events[index]!.offset > events[index - 1]!.offset).toBe(true);
  expect(new Set(events.map((event) => event.payload.id)).size).toBe(events.length);
}
