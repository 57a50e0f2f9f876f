import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Consumer, type IHeaders } from 'kafkajs';
import { inject } from 'vitest';
import { api, type Credentials } from '../api.js';
import { taskEventsTopic } from '@tws/contracts';

export type EventKind = 'task.created' | 'task.updated' | 'task.completed';
export const allEventKinds: EventKind[] = ['task.created', 'task.updated', 'task.completed'];

export interface Webhook {
  id: string;
  url: string;
  events: EventKind[];
  createdAt?: string;
}

export interface AttemptLog {
  attempt: number;
  attemptedAt: string;
  durationMs: number;
  outcome: 'succeeded' | 'failed' | 'blocked';
  statusCode: number | null;
  error: string | null;
}

export interface DeliveryLog {
  id: string;
  eventId: string;
  event: EventKind;
  status: 'pending' | 'succeeded' | 'failed' | 'cancelled';
  createdAt: string;
  redeliveryOf: string | null;
  nextAttemptAt: string | null;
  attempts: AttemptLog[];
}

/** POST /v1/webhooks; throws unless 201. */
export async function registerWebhook(
  credentials: Credentials,
  body: { url: string; secret: string; events?: EventKind[] },
): Promise<Webhook> {
  const response = await api<Webhook>('POST', '/v1/webhooks', { credentials, body });
  if (response.status !== 201) throw new Error(`webhook registration answered ${response.status}: ${response.text}`);
  return response.body;
}

export async function listDeliveries(credentials: Credentials, webhookId: string, query = ''): Promise<{ deliveries: DeliveryLog[]; nextCursor: string | null }> {
  const response = await api<{ deliveries: DeliveryLog[]; nextCursor: string | null }>(
    'GET',
    `/v1/webhooks/${webhookId}/deliveries${query}`,
    { credentials },
  );
  if (response.status !== 200) throw new Error(`delivery log answered ${response.status}: ${response.text}`);
  return response.body;
}

/** Polls the delivery log until `done` holds (or fails after `timeoutMs`, showing the last log). */
export async function waitForDeliveryLog(
  credentials: Credentials,
  webhookId: string,
  done: (deliveries: DeliveryLog[]) => boolean,
  timeoutMs = 30_000,
): Promise<DeliveryLog[]> {
  const deadline = Date.now() + timeoutMs;
  let last: DeliveryLog[];
  for (;;) {
    last = (await listDeliveries(credentials, webhookId, '?limit=100')).deliveries;
    if (done(last)) return last;
    if (Date.now() > deadline) throw new Error(`delivery log not as expected after ${timeoutMs} ms: ${JSON.stringify(last, null, 1)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export function kafkaClient(): Kafka {
  return new Kafka({ clientId: `webhooks-test-${process.pid}`, brokers: inject('stack').kafkaBrokers, logLevel: logLevel.NOTHING });
}

/** A task event exactly as the tasks service publishes it (value = contract payload; headers). */
export function taskEventMessage(input: { workspaceId: string; kind: EventKind; taskId?: string; name?: string; number?: number }) {
  const taskId = input.taskId ?? randomUUID();
  const payload = {
    id: `evt_${randomUUID()}`,
    event: input.kind,
    createdAt: new Date().toISOString(),
    data: {
      id: taskId,
      number: input.number ?? 1,
      name: input.name ?? 'Write the report',
      isCompleted: input.kind === 'task.completed',
      listId: randomUUID(),
      projectId: randomUUID(),
      assigneeId: null,
      statusId: randomUUID(),
      labels: [],
      createdAt: new Date().toISOString(),
    },
  };
  return {
    payload,
    message: {
      key: taskId,
      value: JSON.stringify(payload),
      headers: { 'event-id': payload.id, 'event-type': input.kind, 'workspace-id': input.workspaceId },
    },
  };
}

/** Publishes task events to task-events.v1 as the tasks service's outbox relay does. */
export async function publishTaskEvents(messages: Array<{ key: string; value: string; headers: Record<string, string> }>): Promise<void> {
  const producer = kafkaClient().producer();
  await producer.connect();
  try {
    await producer.send({ topic: taskEventsTopic, acks: -1, messages });
  } finally {
    await producer.disconnect();
  }
}

export interface TopicMessage {
  key: string | null;
  value: string;
  headers: Record<string, string>;
  partition: number;
  offset: string;
}

const headerStrings = (headers: IHeaders | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name, String(Array.isArray(value) ? value[0] : value)]));

/** Reads `topic` from the beginning (own throw-away group) until a message matches, or times out. */
export async function findOnTopic(topic: string, matches: (message: TopicMessage) => boolean, timeoutMs = 30_000): Promise<TopicMessage> {
  const consumer: Consumer = kafkaClient().consumer({ groupId: `webhooks-test-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    return await new Promise<TopicMessage>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching message on ${topic} within ${timeoutMs} ms`)), timeoutMs);
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          const candidate: TopicMessage = {
            key: message.key?.toString() ?? null,
            value: message.value?.toString() ?? '',
            headers: headerStrings(message.headers),
            partition,
            offset: message.offset,
          };
          if (matches(candidate)) {
            clearTimeout(timer);
            resolve(candidate);
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
}
