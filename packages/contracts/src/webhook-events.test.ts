import { describe, expect, it } from 'vitest';
import { pingEventSchema, taskEventSchemaOf, webhookEventKinds } from './index.js';

const envelope = { id: 'evt_7d1c1c2e-36c1-4b7e-9f55-0a7f8d0f3c11', createdAt: '2026-11-22T10:00:01.000Z' };

describe('webhook payloads', () => {
  it('ping: the task events envelope with the endpoint id as data, strict', () => {
    const ping = { ...envelope, event: 'ping', data: { webhookId: 'a1d2c3b4-0000-4000-8000-00000000000a' } };
    expect(pingEventSchema.parse(ping)).toEqual(ping);
    expect(pingEventSchema.safeParse({ ...ping, id: 'evt_x' }).success).toBe(false);
    expect(pingEventSchema.safeParse({ ...ping, event: 'task.created' }).success).toBe(false);
    expect(pingEventSchema.safeParse({ ...ping, data: { webhookId: '' } }).success).toBe(false);
    expect(pingEventSchema.safeParse({ ...ping, data: { ...ping.data, extra: 1 } }).success).toBe(false);
    expect(webhookEventKinds).toEqual(['task.created', 'task.updated', 'task.completed', 'ping']);
  });

  it('a task event of one kind refuses the others', () => {
    const shape = taskEventSchemaOf('task.completed').shape.event;
    expect(shape.safeParse('task.completed').success).toBe(true);
    expect(shape.safeParse('task.updated').success).toBe(false);
  });
});
