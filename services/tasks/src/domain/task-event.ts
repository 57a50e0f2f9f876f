import { randomUUID } from 'node:crypto';
import { currentRequestId, currentTraceparent } from '@tws/common';
import type { TaskEvent, TaskEventKind } from '@tws/contracts';
import type { Task } from './model.js';

/**
 * Builds the event of a task change; `eventId` is the outbox row id (the payload id is
 * `evt_<eventId>`); `requestId` is the request that made the change, if any (the outbox keeps it
 * beside the payload and the relay sends it as a Kafka header, so the webhooks service logs it);
 * `traceparent` is the trace context of the call that made it when tracing is on (the outbox keeps
 * it too and the relay's Kafka record span is its child).
 */
export function buildTaskEvent(
  kind: TaskEventKind,
  task: Task,
  at: Date = new Date(),
): { eventId: string; event: TaskEvent; requestId: string | null; traceparent: string | null } {
  const eventId = randomUUID();
  return {
    eventId,
    requestId: currentRequestId() ?? null,
    traceparent: currentTraceparent(),
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
