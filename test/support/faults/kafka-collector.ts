import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { taskEventsTopic } from '@tws/contracts';

export interface CollectedEvent {
  id: string;
  event: string;
  taskId: string;
  workspaceId: string;
  partition: number;
  offset: bigint;
  name: string;
}

/** Reads task-events.v1 from the beginning with its own consumer group and keeps every message. */
export class TaskEventCollector {
  readonly received: CollectedEvent[] = [];
  private constructor(private readonly consumer: Consumer) {}

  static async start(brokers: string[]): Promise<TaskEventCollector> {
    const kafka = new Kafka({ clientId: 'faults-collector', brokers, logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `faults-collector-${randomUUID()}` });
    const collector = new TaskEventCollector(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic: taskEventsTopic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const payload = JSON.parse(message.value?.toString('utf8') ?? '{}') as { id: string; event: string; data: { id: string; name: string } };
        collector.received.push({
          id: payload.id,
          event: payload.event,
          taskId: payload.data.id,
          workspaceId: String(message.headers?.['workspace-id'] ?? ''),
          partition,
          offset: BigInt(message.offset),
          name: payload.data.name,
        });
      },
    });
    return collector;
  }

  of(workspaceId: string): CollectedEvent[] {
    return this.received.filter((event) => event.workspaceId === workspaceId);
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}
