import { randomUUID } from 'node:crypto';
import type { TaskEvent, TaskEventKind } from '@tws/contracts';
import type { Task } from './model.js';

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
