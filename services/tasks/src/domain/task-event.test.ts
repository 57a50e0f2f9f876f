import { describe, expect, it } from 'vitest';
import type { Task } from './model.js';
import { taskEventSchema } from '@tws/contracts';
import { buildTaskEvent } from './task-event.js';

const task: Task = {
  id: '7d1c1c2e-36c1-4b7e-9f55-0a7f8d0f3c11',
  workspaceId: '2f0c9a43-8ed1-4b52-b2f1-6a7b7e8f9a10',
  number: 7,
  name: 'Ship it',
  isCompleted: false,
  description: [{ type: 'paragraph', children: [{ text: 'secret plans' }] }],
  listId: 'a1d2c3b4-0000-4000-8000-000000000001',
  projectId: 'a1d2c3b4-0000-4000-8000-000000000002',
  assigneeId: null,
  statusId: 'a1d2c3b4-0000-4000-8000-000000000003',
  order: 3,
  createdAt: new Date('2026-11-22T10:00:00.123Z'),
  updatedAt: new Date('2026-11-22T10:05:00.000Z'),
  labels: [{ id: 'l1', name: 'bug', color: '#FF0000' }],
};

describe('task events', () => {
  it('carry exactly the contract payload: no description, no order, no workspace', () => {
    const { eventId, event } = buildTaskEvent('task.created', task, new Date('2026-11-22T10:00:01.000Z'));
    expect(event).toEqual({
      id: `evt_${eventId}`,
      event: 'task.created',
      createdAt: '2026-11-22T10:00:01.000Z',
      data: {
        id: task.id,
        number: 7,
        name: 'Ship it',
        isCompleted: false,
        listId: task.listId,
        projectId: task.projectId,
        assigneeId: null,
        statusId: task.statusId,
        labels: [{ id: 'l1', name: 'bug', color: '#FF0000' }],
        createdAt: '2026-11-22T10:00:00.123Z',
      },
    });
    expect(taskEventSchema.parse(event)).toEqual(event);
  });
});
