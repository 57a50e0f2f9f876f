import { describe, expect, it } from 'vitest';
import {
  attemptOfTopic,
  exampleTaskEvent,
  deadLetterMessage,
  maxAttempts,
  originalOf,
  parseScheduledAttempt,
  parseTaskEvent,
  requestIdOfMessage,
  retryTopicOf,
  retryTopics,
  scheduledAttemptMessage,
  taskEventMessage,
  taskEventSchema,
  type TaskEvent,
} from './index.js';

const event: TaskEvent = exampleTaskEvent;
const workspaceId = '2f0c9a43-8ed1-4b52-b2f1-6a7b7e8f9a10';
const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('task-events.v1', () => {
  it('the documented example event is valid for the writer', () => {
    expect(taskEventSchema.parse(exampleTaskEvent)).toEqual(exampleTaskEvent);
  });

  it('the writer refuses extra fields and malformed values', () => {
    expect(taskEventSchema.safeParse({ ...event, data: { ...event.data, description: [] } }).success).toBe(false);
    expect(taskEventSchema.safeParse({ ...event, id: 'evt_123' }).success).toBe(false);
    expect(taskEventSchema.safeParse({ ...event, event: 'task.deleted' }).success).toBe(false);
    expect(taskEventSchema.safeParse({ ...event, createdAt: '2026-11-22T10:00:01Z' }).success).toBe(false);
  });

  it('the writer keeps the contract field order whatever order the input had', () => {
    const shuffled = Object.fromEntries(Object.entries(event).reverse());
    expect(Object.keys(taskEventSchema.parse(shuffled))).toEqual(['id', 'event', 'createdAt', 'data']);
  });

  it('what the writer produces, the reader reads back, with the exact bytes as payload', () => {
    const message = taskEventMessage(event, workspaceId);
    expect(message.key).toBe(event.data.id);
    expect(message.headers).toEqual({ 'event-id': event.id, 'event-type': 'task.updated', 'workspace-id': workspaceId });
    const value = bytes(message.value);
    expect(parseTaskEvent(value, message.headers)).toEqual({ id: event.id, type: 'task.updated', workspaceId, taskId: event.data.id, payload: value });
  });

  it('a request id rides in the request-id header, only when there is one, and the reader ignores it', () => {
    const message = taskEventMessage(event, workspaceId, 'req-7');
    expect(message.headers['request-id']).toBe('req-7');
    expect(requestIdOfMessage(message.headers)).toBe('req-7');
    expect(parseTaskEvent(bytes(message.value), message.headers)).toMatchObject({ id: event.id });
    expect(taskEventMessage(event, workspaceId, null).headers).not.toHaveProperty('request-id');
    expect(requestIdOfMessage(taskEventMessage(event, workspaceId).headers)).toBeUndefined();
  });

  it('the reader tolerates fields a later writer adds, and refuses what it cannot use', () => {
    const { headers } = taskEventMessage(event, workspaceId);
    const later = { ...event, data: { ...event.data, dueOn: '2026-12-01' }, source: 'mcp' };
    expect(typeof parseTaskEvent(bytes(JSON.stringify(later)), headers)).toBe('object');
    expect(parseTaskEvent(null, headers)).toBe('empty message value');
    expect(parseTaskEvent(bytes('{'), headers)).toBe('value is not JSON');
    expect(parseTaskEvent(bytes(JSON.stringify(event)), { ...headers, 'event-type': 'task.created' })).toBe(
      'headers event-id/event-type disagree with the value',
    );
    expect(parseTaskEvent(bytes(JSON.stringify(event)), { 'event-id': event.id })).toMatch(/^bad headers/);
    expect(parseTaskEvent(bytes(JSON.stringify({ ...event, data: { ...event.data, number: 'seven' } })), headers)).toMatch(/^bad value/);
  });
});

describe('scheduled attempts and dead letters', () => {
  const attempt = {
    deliveryId: '0b8a4a43-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
    eventId: event.id,
    endpointId: '1c9b5b54-2d3e-4f60-9bac-1d2e3f4a5b6c',
    attempt: 3,
    notBefore: '2026-11-22T10:35:00.000Z',
  };
  const original = { topic: 'task-events.v1', partition: 4, offset: '1234' };

  it('round-trips a scheduled attempt, its due time and the original position through the headers', () => {
    const message = scheduledAttemptMessage(attempt, { eventType: 'task.updated', workspaceId, original });
    expect(message.key).toBe(attempt.deliveryId);
    expect(parseScheduledAttempt(bytes(message.value))).toEqual(attempt);
    expect(message.headers).toMatchObject({ attempt: '3', 'not-before': attempt.notBefore, 'event-type': 'task.updated', 'workspace-id': workspaceId });
    expect(originalOf(message.headers)).toEqual(original);
  });

  it('a scheduled attempt carries the request id on to the next attempt', () => {
    expect(requestIdOfMessage(scheduledAttemptMessage(attempt, { requestId: 'req-7' }).headers)).toBe('req-7');
    expect(scheduledAttemptMessage(attempt, {}).headers).not.toHaveProperty('request-id');
  });

  it('a redelivery names the delivery it repeats and no original position', () => {
    const message = scheduledAttemptMessage({ ...attempt, attempt: 1 }, { redeliveryOf: 'e7f1a2b3-0000-4000-8000-00000000000a' });
    expect(message.headers['redelivery-of']).toBe('e7f1a2b3-0000-4000-8000-00000000000a');
    expect(originalOf(message.headers)).toBeUndefined();
  });

  it('refuses an attempt outside 1..maxAttempts and a value that is not one', () => {
    expect(parseScheduledAttempt(bytes(JSON.stringify({ ...attempt, attempt: maxAttempts + 1 })))).toMatch(/^bad value/);
    expect(parseScheduledAttempt(bytes(JSON.stringify({ ...attempt, deliveryId: 'x' })))).toMatch(/^bad value/);
    expect(parseScheduledAttempt(null)).toBe('empty message value');
  });

  it('a dead letter carries the last outcome and the payload, keyed by delivery', () => {
    const message = deadLetterMessage(
      {
        deliveryId: attempt.deliveryId,
        eventId: event.id,
        endpointId: attempt.endpointId,
        workspaceId,
        event: 'task.updated',
        attempts: maxAttempts,
        failedAt: '2026-11-22T18:40:00.000Z',
        lastOutcome: 'http_error',
        lastStatusCode: 503,
        lastError: null,
        payload: event,
      },
      { original },
    );
    expect(message.key).toBe(attempt.deliveryId);
    expect(JSON.parse(message.value)).toMatchObject({ attempts: 5, lastStatusCode: 503, payload: event });
    expect(message.headers).toMatchObject({ attempt: '5', 'workspace-id': workspaceId, 'original-offset': '1234' });
  });

  it('delay topics carry attempts 2..maxAttempts, in order', () => {
    expect(retryTopics.map((topic) => attemptOfTopic(topic))).toEqual([2, 3, 4, 5]);
    expect(retryTopicOf(2)).toBe('webhooks.retry.5m');
    expect(() => retryTopicOf(1)).toThrow(RangeError);
    expect(attemptOfTopic('task-events.v1')).toBeUndefined();
  });
});
