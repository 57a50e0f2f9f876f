import { z } from 'zod';
import { headerNames, headerText, parseJson, type MessageHeaders, type OutboundMessage } from './headers.js';
import { maxAttempts } from './topics.js';

/**
 * The value of a message on a delay topic (`webhooks.retry.*`) or the redelivery topic: which
 * delivery to attempt, which attempt it is, and not before when. Key = delivery id.
 */
export const scheduledAttemptSchema = z.object({
  deliveryId: z.uuid(),
  eventId: z.string().min(1),
  endpointId: z.uuid(),
  attempt: z.number().int().min(1).max(maxAttempts),
  notBefore: z.iso.datetime({ offset: false }),
});
export type ScheduledAttempt = z.infer<typeof scheduledAttemptSchema>;

/** Where the original event entered (its `task-events.v1` partition and offset), carried from attempt to attempt. */
export interface SourceRef {
  topic: string;
  partition: number;
  offset: string;
}

/** Headers beside the value: what an operator reading the topic needs without decoding it. */
export interface ScheduleContext {
  eventType?: string | undefined;
  workspaceId?: string | undefined;
  original?: SourceRef | undefined;
  /** On the redelivery topic: the delivery this one repeats. */
  redeliveryOf?: string | undefined;
  /** The request that caused the event (its `request-id` header), carried for the logs. */
  requestId?: string | undefined;
  /** The trace context the scheduled attempt continues (its `traceparent` header), when traced. */
  traceparent?: string | null | undefined;
}

function scheduleHeaders(attempt: number, notBefore: string, deliveryId: string, eventId: string, context: ScheduleContext): Record<string, string> {
  const headers: Record<string, string> = {
    [headerNames.attempt]: String(attempt),
    [headerNames.notBefore]: notBefore,
    [headerNames.deliveryId]: deliveryId,
    [headerNames.eventId]: eventId,
  };
  if (context.eventType !== undefined) headers[headerNames.eventType] = context.eventType;
  if (context.workspaceId !== undefined) headers[headerNames.workspaceId] = context.workspaceId;
  if (context.original) {
    headers[headerNames.originalTopic] = context.original.topic;
    headers[headerNames.originalPartition] = String(context.original.partition);
    headers[headerNames.originalOffset] = context.original.offset;
  }
  if (context.redeliveryOf !== undefined) headers[headerNames.redeliveryOf] = context.redeliveryOf;
  if (context.requestId !== undefined) headers[headerNames.requestId] = context.requestId;
  if (context.traceparent) headers[headerNames.traceparent] = context.traceparent;
  return headers;
}

/** The message of a scheduled attempt (delay or redelivery topic). */
export function scheduledAttemptMessage(attempt: ScheduledAttempt, context: ScheduleContext = {}): OutboundMessage {
  const value: ScheduledAttempt = {
    deliveryId: attempt.deliveryId,
    eventId: attempt.eventId,
    endpointId: attempt.endpointId,
    attempt: attempt.attempt,
    notBefore: attempt.notBefore,
  };
  return {
    key: attempt.deliveryId,
    value: JSON.stringify(value),
    headers: scheduleHeaders(attempt.attempt, attempt.notBefore, attempt.deliveryId, attempt.eventId, context),
  };
}

/** Reads a scheduled attempt's value; the problem as text otherwise. */
export function parseScheduledAttempt(value: Buffer | null): ScheduledAttempt | string {
  const json = parseJson(value);
  if (typeof json === 'string') return json;
  const parsed = scheduledAttemptSchema.safeParse(json.json);
  return parsed.success ? parsed.data : `bad value: ${z.prettifyError(parsed.error)}`;
}

/** The due time a scheduled message's `not-before` header names (it agrees with the value's). */
export function notBeforeOf(headers: MessageHeaders | undefined): string | undefined {
  return headerText(headers, headerNames.notBefore);
}

/** The `request-id` header of a task event or scheduled attempt, as sent (the reader checks it). */
export function requestIdOfMessage(headers: MessageHeaders | undefined): string | undefined {
  return headerText(headers, headerNames.requestId);
}

/** The `traceparent` header of a task event or scheduled attempt, as sent (the reader checks it). */
export function traceparentOfMessage(headers: MessageHeaders | undefined): string | undefined {
  return headerText(headers, headerNames.traceparent);
}

/** The original event's position from a scheduled message's headers. */
export function originalOf(headers: MessageHeaders | undefined): SourceRef | undefined {
  const topic = headerText(headers, headerNames.originalTopic);
  const partition = Number(headerText(headers, headerNames.originalPartition));
  const offset = headerText(headers, headerNames.originalOffset);
  return topic && Number.isInteger(partition) && offset ? { topic, partition, offset } : undefined;
}

/** The value of a `webhooks.dead` message: the delivery, its last outcome, and the event payload. */
export const deadLetterSchema = z.object({
  deliveryId: z.uuid(),
  eventId: z.string().min(1),
  endpointId: z.uuid(),
  workspaceId: z.string().min(1),
  event: z.string().min(1),
  attempts: z.number().int().min(1),
  failedAt: z.iso.datetime({ offset: false }),
  lastOutcome: z.string().nullable(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  payload: z.unknown(),
});
export type DeadLetter = z.infer<typeof deadLetterSchema>;

/** The message of a permanently failed delivery. Key = delivery id. */
export function deadLetterMessage(letter: DeadLetter, context: Pick<ScheduleContext, 'original'> = {}): OutboundMessage {
  const value: DeadLetter = {
    deliveryId: letter.deliveryId,
    eventId: letter.eventId,
    endpointId: letter.endpointId,
    workspaceId: letter.workspaceId,
    event: letter.event,
    attempts: letter.attempts,
    failedAt: letter.failedAt,
    lastOutcome: letter.lastOutcome,
    lastStatusCode: letter.lastStatusCode,
    lastError: letter.lastError,
    payload: letter.payload,
  };
  return {
    key: letter.deliveryId,
    value: JSON.stringify(value),
    headers: scheduleHeaders(letter.attempts, letter.failedAt, letter.deliveryId, letter.eventId, {
      eventType: letter.event,
      workspaceId: letter.workspaceId,
      original: context.original,
    }),
  };
}
