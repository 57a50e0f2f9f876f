import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../schemas/common.js';
import { Member, Status, Workspace, toMember, toStatus, toWorkspace } from '../schemas/resources.js';

/** GET /v1/workspace, /v1/members, /v1/statuses: the workspace of the credentials. */
const workspaceRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/workspace',
    {
      config: { auth: true },
      schema: {
        tags: ['Workspace'],
        operationId: 'getWorkspace',
        summary: 'The workspace linked to the credentials',
        response: { 200: Workspace, ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => {
      const { workspace } = await app.tasksApi.GetWorkspace({ workspaceId: request.principal.workspaceId });
      return toWorkspace(workspace);
    },
  );

  app.get(
    '/members',
    {
      config: { auth: true },
      schema: {
        tags: ['Workspace'],
        operationId: 'listMembers',
        summary: 'Members of the workspace',
        response: { 200: z.array(Member), ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => {
      const { members } = await app.tasksApi.ListMembers({ workspaceId: request.principal.workspaceId });
      return members.map(toMember);
    },
  );

  app.get(
    '/statuses',
    {
      config: { auth: true },
      schema: {
        tags: ['Workspace'],
        operationId: 'listStatuses',
        summary: 'Task statuses of the workspace, ordered by position',
        response: { 200: z.array(Status), ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => {
      const { statuses } = await app.tasksApi.ListStatuses({ workspaceId: request.principal.workspaceId });
      return statuses.map(toStatus);
    },
  );
};

export default workspaceRoutes;
