import type { GrpcServerMetrics, Logger, Pool } from '@tws/common';
import { invalid, unary } from '@tws/common';
import type { Actor__Output } from '@tws/proto-types/generated/tasks/v1/Actor';
import type { TasksServiceHandlers } from '@tws/proto-types/generated/tasks/v1/TasksService';
import { ApiKeyUsage } from '../domain/api-key-usage.js';
import { listCommentsPage } from '../domain/comments.js';
import * as projects from '../domain/projects.js';
import * as tasks from '../domain/tasks.js';
import { getTasksJson, listTasksJson } from '../domain/task-views.js';
import { listTaskPage } from '../domain/task-list-page.js';
import { streamTasksHandler, type TaskListStreamSettings } from './task-list-stream-service.js';
import * as workspaces from '../domain/workspaces.js';
import { taskWriteHandlers } from './task-writes.js';
import { commentMessage, memberMessage, membershipMessage, planMessage, projectMessage, sectionMessage, statusMessage, workspaceMessage } from './mappers.js';

/** Largest GetTasks batch served; the gateway sends at most 64. */
const maxTasksPerBatch = 500;
const emptyJson = Buffer.alloc(0);

export interface HandlerDeps {
  pool: Pool;
  logger: Logger;
  metrics: GrpcServerMetrics;
}

function actorInput(actor: Actor__Output | null): tasks.Actor | undefined {
  if (actor?.kind === 'apiKeyId' && actor.apiKeyId) return { apiKeyId: actor.apiKeyId };
  if (actor?.kind === 'userId' && actor.userId) return { userId: actor.userId };
  return undefined;
}

/** tasks.v1.TasksService: thin mapping between the proto messages and the domain operations. */
export function tasksServiceHandlers({ pool, logger, metrics, taskLists }: HandlerDeps & { taskLists: TaskListStreamSettings }): TasksServiceHandlers {
  const options = { service: 'tasks.v1.TasksService', logger, metrics };
  const usage = new ApiKeyUsage(pool, logger);
  return {
    AuthenticateApiKey: unary('AuthenticateApiKey', async (request) => workspaces.authenticateApiKey(pool, request.key, usage), options),
    GetMembership: unary(
      'GetMembership',
      async (request) => ({ member: memberMessage(await workspaces.getMembership(pool, request.workspaceId, request.userId)) }),
      options,
    ),
    GetWorkspace: unary(
      'GetWorkspace',
      async (request) => ({ workspace: workspaceMessage(await workspaces.getWorkspace(pool, request.workspaceId)) }),
      options,
    ),
    ListMembers: unary(
      'ListMembers',
      async (request) => ({ members: (await workspaces.listMembers(pool, request.workspaceId)).map(memberMessage) }),
      options,
    ),
    ListStatuses: unary(
      'ListStatuses',
      async (request) => ({ statuses: (await workspaces.listStatuses(pool, request.workspaceId)).map(statusMessage) }),
      options,
    ),
    ListProjects: unary(
      'ListProjects',
      async (request) => ({ projects: (await projects.listProjects(pool, request.workspaceId)).map(projectMessage) }),
      options,
    ),
    CreateProject: unary(
      'CreateProject',
      async (request) =>
        projects.createProject(pool, { workspaceId: request.workspaceId, name: request.name, description: request.description }),
      options,
    ),
    UpdateProject: unary(
      'UpdateProject',
      async (request) =>
        projects.updateProject(pool, {
          workspaceId: request.workspaceId,
          id: request.id,
          name: request.name,
          description: request.description,
          clearDescription: request.clearDescription,
          ifMatch: request.ifMatch,
        }),
      options,
    ),
    GetProject: unary(
      'GetProject',
      async (request) => ({ project: projectMessage(await projects.getProject(pool, request.workspaceId, request.id)) }),
      options,
    ),
    ListSections: unary(
      'ListSections',
      async (request) => ({
        sections: (await projects.listSections(pool, request.workspaceId, request.projectId)).map(sectionMessage),
      }),
      options,
    ),
    CreateSection: unary(
      'CreateSection',
      async (request) =>
        projects.createSection(pool, { workspaceId: request.workspaceId, projectId: request.projectId, name: request.name }),
      options,
    ),
    UpdateSection: unary(
      'UpdateSection',
      async (request) => ({
        section: sectionMessage(
          await projects.updateSection(pool, { workspaceId: request.workspaceId, id: request.id, name: request.name, ifMatch: request.ifMatch }),
        ),
      }),
      options,
    ),
    GetSection: unary(
      'GetSection',
      async (request) => ({ section: sectionMessage(await projects.getSection(pool, request.workspaceId, request.id)) }),
      options,
    ),
    ListTasks: unary(
      'ListTasks',
      async (request) => {
        const list = await listTasksJson(pool, request.workspaceId, request.projectId, request.knownVersion || '0');
        return list.json === null
          ? { version: list.version, notModified: !list.streamed, streamed: list.streamed, tasksJson: emptyJson }
          : { version: list.version, notModified: false, streamed: false, tasksJson: Buffer.from(list.json) };
      },
      options,
    ),
    StreamTasks: streamTasksHandler({ pool, logger, metrics, settings: taskLists }),
    ListTaskPage: unary(
      'ListTaskPage',
      async (request) => {
        const page = await listTaskPage(pool, request);
        return { tasksJson: Buffer.from(page.json), next: page.next };
      },
      options,
    ),
    GetTasks: unary(
      'GetTasks',
      async (request) => {
        if (request.tasks.length > maxTasksPerBatch) throw invalid(`at most ${maxTasksPerBatch} tasks per call`);
        const rendered = await getTasksJson(pool, request.tasks);
        return { tasksJson: rendered.tasks.map((json) => (json === null ? emptyJson : Buffer.from(json))), truncated: rendered.truncated };
      },
      options,
    ),
    ...taskWriteHandlers({ pool, logger, metrics }),
    DeleteTask: unary(
      'DeleteTask',
      async (request) => {
        await tasks.deleteTask(pool, request.workspaceId, request.id);
        return {};
      },
      options,
    ),
    CreateComment: unary(
      'CreateComment',
      async (request) =>
        tasks.createComment(pool, {
          workspaceId: request.workspaceId,
          taskId: request.taskId,
          text: request.text,
          actor: actorInput(request.actor),
        }),
      options,
    ),
    DeleteComment: unary(
      'DeleteComment',
      async (request) => {
        await tasks.deleteComment(pool, request.workspaceId, request.id);
        return {};
      },
      options,
    ),
    ListTaskComments: unary(
      'ListTaskComments',
      async (request) => {
        const page = await listCommentsPage(pool, { workspaceId: request.workspaceId, taskId: request.taskId, limit: request.limit, cursor: request.cursor });
        return { comments: page.comments.map(commentMessage), nextCursor: page.nextCursor ?? '' };
      },
      options,
    ),
    GetUsage: unary(
      'GetUsage',
      async (request) => {
        const usage = await workspaces.getUsage(pool, request.workspaceId);
        return {
          plan: planMessage(usage.plan),
          ...(usage.limits.projects === null ? {} : { maxProjects: usage.limits.projects }),
          ...(usage.limits.tasks === null ? {} : { maxTasks: usage.limits.tasks }),
          projectCount: usage.counts.projects,
          taskCount: usage.counts.tasks,
        };
      },
      options,
    ),
    ListMembershipsByEmail: unary(
      'ListMembershipsByEmail',
      async (request) => ({ memberships: (await workspaces.listMembershipsByEmail(pool, request.email)).map(membershipMessage) }),
      options,
    ),
  };
}
