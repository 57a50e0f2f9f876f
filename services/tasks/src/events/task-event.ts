import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Task } from '../domain/model.js';

export const taskEventKinds = ['task.created', 'task.updated', 'task.completed'] as const;
export type TaskEventKind = (typeof taskEventKinds)[number];

/** `<timestamp>` of the contract: ISO 8601 UTC with milliseconds. */
const timestamp = z.iso.datetime({ precision: 3 });

/**
 * The webhook payload of the API contract (section 2, "Webhook event payload"), which is also the
 * Kafka value of `task-events.v1`. Strict: no description, no extra field.
 */
export const taskEventSchema = z.strictObject({
  id: z.string().regex(/^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
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

/** Builds the event of a task change; `eventId` is the outbox row id (the payload id is `evt_<eventId>`). */
export function buildTaskEvent(kind: TaskEventKind, task: Task, at: Date = new Date()): { eventId: string; event: TaskEvent } {
  const eventId = randomUUID();
  return {
    eventId,
    event: {
      id: `evt_${eventId}`,
      event: kind,
      createdAt: at.toISOString(),
      data: {
        id: task.id,
        number: task.number,
        name: task.name,
        isCompleted: task.isCompleted,
        listId: task.listId,
        projectId: task.projectId,
        assigneeId: task.assigneeId,
        statusId: task.statusId,
        labels: task.labels.map((label) => ({ id: label.id, name: label.name, color: label.color })),
        createdAt: task.createdAt.toISOString(),
      },
    },
  };
}
