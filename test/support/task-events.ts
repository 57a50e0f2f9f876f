import { randomUUID } from 'node:crypto';
import { taskEventsTopic } from '@tws/contracts';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { pollUntil } from './fixtures.js';

/** A task event as read from task-events.v1 (key = task id; payload = the webhook payload). */
export interface ReadTaskEvent {
  key: string;
  payload: {
    id: string;
    event: 'task.created' | 'task.updated' | 'task.completed';
    createdAt: string;
    data: { id: string; name: string; labels: Array<{ id: string; name: string; color: string }>; [field: string]: unknown };
  };
}

/**
 * Reads task-events.v1 from the beginning with a consumer group of its own and keeps its events, so
 * a test sees what a webhook subscriber would be sent.
 */
export class TaskEventReader {
  private readonly received: ReadTaskEvent[] = [];
  private constructor(private readonly consumer: Consumer) {}

  static async start(brokers: string[]): Promise<TaskEventReader> {
    const consumer = new Kafka({ clientId: 'task-events-reader', brokers, logLevel: logLevel.NOTHING }).consumer({ groupId: `task-events-${randomUUID()}` });
    const reader = new TaskEventReader(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic: taskEventsTopic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const key = message.key?.toString('utf8') ?? '';
        reader.received.push({ key, payload: JSON.parse(message.value?.toString('utf8') ?? '{}') as ReadTaskEvent['payload'] });
      },
    });
    return reader;
  }

  /** The task's events of one kind, in the order read (its partition's order). */
  of(taskId: string, kind: ReadTaskEvent['payload']['event'] = 'task.updated'): ReadTaskEvent[] {
    return this.received.filter((event) => event.key === taskId && event.payload.event === kind);
  }

  /** Waits until the task has `count` task.updated events, then `settleMs` longer so an extra one would be seen too. */
  async waitFor(taskId: string, count: number, settleMs = 2_000, timeoutMs = 30_000): Promise<ReadTaskEvent[]> {
    await pollUntil(async () => this.of(taskId).length, (got) => got >= count, { timeoutMs, intervalMs: 100 });
    if (this.of(taskId).length < count) throw new Error(`task ${taskId}: ${this.of(taskId).length} of ${count} events in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    return this.of(taskId);
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}
