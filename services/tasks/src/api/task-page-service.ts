import { unary } from '@tws/common';
import type { ActingPerson__Output } from '@tws/proto-types/generated/tasks/v1/ActingPerson';
import type { TaskPageServiceHandlers } from '@tws/proto-types/generated/tasks/v1/TaskPageService';
import * as taskPage from '../domain/task-page.js';
import { commentMessage, projectMessage, taskMessage } from './mappers.js';
import type { HandlerDeps } from './tasks-service.js';

const acting = (message: ActingPerson__Output | null) => ({ workspaceId: message?.workspaceId ?? '', userId: message?.userId ?? '' });

/** tasks.v1.TaskPageService: the task page of a signed-in person (services/web); rules in domain/task-page.ts. */
export function taskPageServiceHandlers({ pool, logger, metrics }: HandlerDeps): TaskPageServiceHandlers {
  const options = { service: 'tasks.v1.TaskPageService', logger, metrics };
  return {
    GetTaskByNumber: unary(
      'GetTaskByNumber',
      async (request) => {
        const found = await taskPage.getTaskByNumber(pool, acting(request.acting), request.taskPrefix, request.number);
        return { task: taskMessage(found.task), project: projectMessage(found.project) };
      },
      options,
    ),
    ListComments: unary(
      'ListComments',
      async (request) => {
        const listed = await taskPage.listComments(pool, acting(request.acting), request.taskId);
        return {
          comments: listed.comments.map(commentMessage),
          truncated: listed.truncated,
        };
      },
      options,
    ),
  };
}
