import { unary } from '@tws/common';
import type { ActingPerson__Output } from '@tws/proto-types/generated/tasks/v1/ActingPerson';
import type { LabelsServiceHandlers } from '@tws/proto-types/generated/tasks/v1/LabelsService';
import type { TaskLabelsChange as TaskLabelsChangeMessage } from '@tws/proto-types/generated/tasks/v1/TaskLabelsChange';
import * as labels from '../domain/labels.js';
import type { HandlerDeps } from './tasks-service.js';

const acting = (message: ActingPerson__Output | null): labels.ActingPerson => ({
  workspaceId: message?.workspaceId ?? '',
  userId: message?.userId ?? '',
});

const changeMessage = (change: labels.TaskLabelsChange): TaskLabelsChangeMessage => ({
  changed: change.changed,
  taskNumber: change.taskNumber,
  taskPrefix: change.taskPrefix,
  labels: change.labels,
});

/** tasks.v1.LabelsService: the workspace's labels and the labels on its tasks (services/web); rules in domain/labels.ts. */
export function labelsServiceHandlers({ pool, logger, metrics }: HandlerDeps): LabelsServiceHandlers {
  const options = { service: 'tasks.v1.LabelsService', logger, metrics };
  return {
    ListLabels: unary(
      'ListLabels',
      async (request) => {
        const listed = await labels.listLabels(pool, acting(request.acting));
        return { labels: listed.map(({ taskCount, ...label }) => ({ label, taskCount })) };
      },
      options,
    ),
    CreateLabel: unary(
      'CreateLabel',
      async (request) => ({ label: await labels.createLabel(pool, acting(request.acting), { name: request.name, color: request.color }) }),
      options,
    ),
    UpdateLabel: unary(
      'UpdateLabel',
      async (request) => {
        const updated = await labels.updateLabel(pool, acting(request.acting), request.id, { name: request.name, color: request.color });
        return { label: updated.label, tasksUpdated: updated.tasksUpdated };
      },
      options,
    ),
    DeleteLabel: unary('DeleteLabel', async (request) => labels.deleteLabel(pool, acting(request.acting), request.id), options),
    AddTaskLabel: unary(
      'AddTaskLabel',
      async (request) => ({
        result: changeMessage(await labels.changeTaskLabel(pool, acting(request.acting), { taskId: request.taskId, labelId: request.labelId, on: true })),
      }),
      options,
    ),
    RemoveTaskLabel: unary(
      'RemoveTaskLabel',
      async (request) => ({
        result: changeMessage(await labels.changeTaskLabel(pool, acting(request.acting), { taskId: request.taskId, labelId: request.labelId, on: false })),
      }),
      options,
    ),
  };
}
