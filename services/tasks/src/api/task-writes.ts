import { invalid, serveBatchItem, unary, type BatchItemOutcome } from '@tws/common';
import type { DescriptionChange__Output } from '@tws/proto-types/generated/tasks/v1/DescriptionChange';
import type { CreateTaskRequest__Output } from '@tws/proto-types/generated/tasks/v1/CreateTaskRequest';
import type { CreateTaskResponse } from '@tws/proto-types/generated/tasks/v1/CreateTaskResponse';
import type { UpdateTaskRequest__Output } from '@tws/proto-types/generated/tasks/v1/UpdateTaskRequest';
import type { UpdateTaskResponse } from '@tws/proto-types/generated/tasks/v1/UpdateTaskResponse';
import type { TasksServiceHandlers } from '@tws/proto-types/generated/tasks/v1/TasksService';
import type { DescriptionInput } from '../domain/description.js';
import * as tasks from '../domain/tasks.js';
import { taskMessage } from './mappers.js';
import type { HandlerDeps } from './tasks-service.js';

/** Most items of one CreateTasks / UpdateTasks call (proto/tasks/v1/tasks.proto): answers with the `task` message, or with `task_json` only (`json_only`). */
export const maxCreatesPerBatch = 64;
export const maxUpdatesPerBatch = 8;
export const maxJsonOnlyUpdatesPerBatch = 24;

type WriteHandlers = Pick<TasksServiceHandlers, 'CreateTask' | 'UpdateTask' | 'CreateTasks' | 'UpdateTasks'>;

/** An item's outcome as the proto's oneof result (`answer` names the success field). */
function resultOf<T, K extends string>(answer: K, outcome: BatchItemOutcome<T>): { [key in K]?: T } & { error?: { code: number; details: string } } {
  return ('ok' in outcome ? { [answer]: outcome.ok } : { error: outcome.error }) as { [key in K]?: T } & { error?: { code: number; details: string } };
}

function descriptionInput(change: DescriptionChange__Output | null): DescriptionInput | undefined {
  switch (change?.value) {
    case 'markdown':
      return { markdown: change.markdown ?? '' };
    case 'nodesJson':
      return { nodesJson: change.nodesJson ?? '' };
    case 'clear':
      return change.clear ? { clear: true } : undefined;
    default:
      return undefined;
  }
}

/**
 * CreateTask and UpdateTask, and the coalesced CreateTasks and UpdateTasks serving each item the same
 * way (its own outcome; `unary` checks the whole call for U+0000, the gateway sends none).
 */
export function taskWriteHandlers({ pool, logger, metrics }: HandlerDeps): WriteHandlers {
  const options = { service: 'tasks.v1.TasksService', logger, metrics };
  const create = (request: CreateTaskRequest__Output): Promise<CreateTaskResponse> =>
    tasks.createTask(pool, {
      workspaceId: request.workspaceId,
      projectId: request.projectId,
      listId: request.listId,
      name: request.name,
      assigneeId: request.assigneeId,
    });
  /** The answer to a change; without the `task` message when the caller reads `task_json` only (`json_only`). */
  const update = async (request: UpdateTaskRequest__Output, jsonOnly = false): Promise<UpdateTaskResponse> => {
    const { task, json, entityTag } = await tasks.updateTask(pool, {
      workspaceId: request.workspaceId,
      id: request.id,
      name: request.name,
      listId: request.listId,
      isCompleted: request.isCompleted,
      statusId: request.statusId,
      assigneeId: request.assigneeId,
      clearAssignee: request.clearAssignee,
      description: descriptionInput(request.description),
      ifMatch: request.ifMatch,
    });
    // `task` too, for a gateway older than `task_json` (during a rolling upgrade).
    return jsonOnly ? { entityTag, taskJson: json } : { task: taskMessage(task), entityTag, taskJson: json };
  };
  return {
    CreateTask: unary('CreateTask', create, options),
    UpdateTask: unary('UpdateTask', (request) => update(request), options),
    CreateTasks: unary(
      'CreateTasks',
      async (request) => {
        if (request.items.length > maxCreatesPerBatch) throw invalid(`at most ${maxCreatesPerBatch} tasks per call`);
        const outcomes = await Promise.all(
          request.items.map((item) =>
            serveBatchItem(item.origin, 'CreateTasks', logger, () =>
              item.task ? create(item.task) : Promise.reject(invalid('item without a task')),
            ),
          ),
        );
        return { results: outcomes.map((outcome) => resultOf('created', outcome)) };
      },
      options,
    ),
    UpdateTasks: unary(
      'UpdateTasks',
      async (request) => {
        const most = request.jsonOnly ? maxJsonOnlyUpdatesPerBatch : maxUpdatesPerBatch;
        if (request.items.length > most) throw invalid(`at most ${most} changes per call`);
        const outcomes = await Promise.all(
          request.items.map((item) =>
            serveBatchItem(item.origin, 'UpdateTasks', logger, () =>
              item.change ? update(item.change, request.jsonOnly) : Promise.reject(invalid('item without a change')),
            ),
          ),
        );
        return { results: outcomes.map((outcome) => resultOf('updated', outcome)) };
      },
      options,
    ),
  };
}
