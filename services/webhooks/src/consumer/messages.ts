import { z } from 'zod';
import type { IHeaders } from 'kafkajs';

export const eventTypes = ['task.created', 'task.updated', 'task.completed'] as const;
export type EventType = (typeof eventTypes)[number];

const timestamp = z.iso.datetime({ offset: false });

/** The value of a `task-events.v1` message: exactly the webhook payload of the contract. */
export const taskEventSchema = z.object({
  id: z.string().regex(/^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be evt_<uuid>'),
  event: z.enum(eventTypes),
  createdAt: timestamp,
  data: z.looseObject({
    id: z.string().min(1),
    number: z.number().int(),
    name: z.string(),
    isCompleted: z.boolean(),
    listId: z.string(),
    projectId: z.string(),
    assigneeId: z.string().nullable(),
    statusId: z.string().nullable(),
    labels: z.array(z.unknown()),
    createdAt: timestamp,
  }),
});

const headerSchema = z.object({
  'event-id': z.string().min(1),
  'event-type': z.enum(eventTypes),
  'workspace-id': z.string().min(1),
});

export function headerText(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

export interface ParsedTaskEvent {
  id: string;
  type: EventType;
  workspaceId: string;
  taskId: string;
  /** The exact bytes of the Kafka value: the body sent and signed. */
  payload: Buffer;
}

/** Validates a task event (headers and value must agree); returns the problem as text otherwise. */
export function parseTaskEvent(value: Buffer | null, headers: IHeaders | undefined): ParsedTaskEvent | string {
  if (!value) return 'empty message value';
  const parsedHeaders = headerSchema.safeParse({
    'event-id': headerText(headers, 'event-id'),
    'event-type': headerText(headers, 'event-type'),
    'workspace-id': headerText(headers, 'workspace-id'),
  });
  if (!parsedHeaders.success) return `bad headers: ${z.prettifyError(parsedHeaders.error)}`;
  let json: unknown;
  try {
    json = JSON.parse(value.toString('utf8'));
  } catch {
    return 'value is not JSON';
  }
  const body = taskEventSchema.safeParse(json);
  if (!body.success) return `bad value: ${z.prettifyError(body.error)}`;
  if (body.data.id !== parsedHeaders.data['event-id'] || body.data.event !== parsedHeaders.data['event-type']) {
    return 'headers event-id/event-type disagree with the value';
  }
  return {
    id: body.data.id,
    type: body.data.event,
    workspaceId: parsedHeaders.data['workspace-id'],
    taskId: body.data.data.id,
    payload: value,
  };
}

/** Value of a message on a delay topic, the redelivery topic, and (with more fields) the dead-letter topic. */
export const scheduledAttemptSchema = z.object({
  deliveryId: z.uuid(),
  eventId: z.string().min(1),
  endpointId: z.uuid(),
  attempt: z.number().int().min(1).max(5),
  notBefore: timestamp,
});
export type ScheduledAttempt = z.infer<typeof scheduledAttemptSchema>;

export interface SourceRef {
  topic: string;
  partition: number;
  offset: string;
}

/** Headers of retry and dead-letter messages (strings; Kafka headers are bytes). */
export function scheduleHeaders(input: {
  attempt: number;
  notBefore: Date;
  deliveryId: string;
  eventId: string;
  eventType: string;
  workspaceId: string;
  original?: SourceRef | undefined;
}): Record<string, string> {
  return {
    attempt: String(input.attempt),
    'not-before': input.notBefore.toISOString(),
    'delivery-id': input.deliveryId,
    'event-id': input.eventId,
    'event-type': input.eventType,
    'workspace-id': input.workspaceId,
    ...(input.original
      ? {
          'original-topic': input.original.topic,
          'original-partition': String(input.original.partition),
          'original-offset': input.original.offset,
        }
      : {}),
  };
}

/** The original event's position, carried along from attempt to attempt. */
export function originalOf(headers: IHeaders | undefined): SourceRef | undefined {
  const topic = headerText(headers, 'original-topic');
  const partition = Number(headerText(headers, 'original-partition'));
  const offset = headerText(headers, 'original-offset');
  return topic && Number.isInteger(partition) && offset ? { topic, partition, offset } : undefined;
}

export function parseScheduledAttempt(value: Buffer | null): ScheduledAttempt | string {
  if (!value) return 'empty message value';
  let json: unknown;
  try {
    json = JSON.parse(value.toString('utf8'));
  } catch {
    return 'value is not JSON';
  }
  const parsed = scheduledAttemptSchema.safeParse(json);
  return parsed.success ? parsed.data : `bad value: ${z.prettifyError(parsed.error)}`;
}
