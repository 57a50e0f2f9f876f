import { z } from 'zod';
import { headerNames, headerText, parseJson, type MessageHeaders, type OutboundMessage } from './headers.js';

/**
 * `task-events.v1`: key = task id, value = the webhook payload of the API contract (section 2,
 * "Webhook event payload"), headers `event-id`, `event-type` and `workspace-id` (so a consumer
 * never calls back to learn the tenant).
 */
export const taskEventKinds = ['task.created', 'task.updated', 'task.completed'] as const;
export type TaskEventKind = (typeof taskEventKinds)[number];

const eventId = /^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `<timestamp>` of the contract: ISO 8601 UTC with milliseconds. */
const timestamp = z.iso.datetime({ precision: 3 });

/**
 * The writer's schema: exactly the contract payload, no description, no extra field, in the
 * contract's field order (a parse output serialises in that order whatever the input's order).
 */
export const taskEventSchema = z.strictObject({
  id: z.string().regex(eventId),
  event: z.enum(taskEventKinds),
  createdAt: timestamp,
  data: z.strictObject({
    id: z.string().min(1),
    number: z.number().int().positive(),
    name: z.string(),
    isCompleted: z.boolean(),
    listId: z.string().min(1),
    projectId: z.string().min(1),
    assigneeId: z.string().nullable(),
    statusId: z.string().nullable(),
    labels: z.array(z.strictObject({ id: z.string(), name: z.string(), color: z.string() })),
    createdAt: timestamp,
  }),
});
export type TaskEvent = z.infer<typeof taskEventSchema>;

/**
 * The reader's schema: what a consumer needs, tolerant of fields a later writer adds (the value is
 * forwarded byte for byte, so nothing is lost) and of timestamps without milliseconds.
 */
export const taskEventReaderSchema = z.object({
  id: z.string().regex(new RegExp(eventId.source, 'i'), 'must be evt_<uuid>'),
  event: z.enum(taskEventKinds),
  createdAt: z.iso.datetime({ offset: false }),
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
    createdAt: z.iso.datetime({ offset: false }),
  }),
});

/** The message of a checked event (a `taskEventSchema` output): key = task id. */
export function taskEventMessage(event: TaskEvent, workspaceId: string, requestId?: string | null, traceparent?: string | null): OutboundMessage {
  const headers: Record<string, string> = { [headerNames.eventId]: event.id, [headerNames.eventType]: event.event, [headerNames.workspaceId]: workspaceId };
  if (requestId) headers[headerNames.requestId] = requestId;
  if (traceparent) headers[headerNames.traceparent] = traceparent;
  return { key: event.data.id, value: JSON.stringify(event), headers };
}

export interface ParsedTaskEvent {
  id: string;
  type: TaskEventKind;
  workspaceId: string;
  taskId: string;
  /** The exact bytes of the Kafka value: what a webhook sends and signs. */
  payload: Buffer;
}

const headerSchema = z.object({
  [headerNames.eventId]: z.string().min(1),
  [headerNames.eventType]: z.enum(taskEventKinds),
  [headerNames.workspaceId]: z.string().min(1),
});

/** Reads a task event (headers and value must agree); the problem as text otherwise. */
export function parseTaskEvent(value: Buffer | null, headers: MessageHeaders | undefined): ParsedTaskEvent | string {
  const parsedHeaders = headerSchema.safeParse({
    [headerNames.eventId]: headerText(headers, headerNames.eventId),
    [headerNames.eventType]: headerText(headers, headerNames.eventType),
    [headerNames.workspaceId]: headerText(headers, headerNames.workspaceId),
  });
  if (!value) return 'empty message value';
  if (!parsedHeaders.success) return `bad headers: ${z.prettifyError(parsedHeaders.error)}`;
  const json = parseJson(value);
  if (typeof json === 'string') return json;
  const body = taskEventReaderSchema.safeParse(json.json);
  if (!body.success) return `bad value: ${z.prettifyError(body.error)}`;
  const header = parsedHeaders.data;
  if (body.data.id !== header[headerNames.eventId] || body.data.event !== header[headerNames.eventType]) {
    return 'headers event-id/event-type disagree with the value';
  }
  return { id: body.data.id, type: body.data.event, workspaceId: header[headerNames.workspaceId], taskId: body.data.data.id, payload: value };
}
