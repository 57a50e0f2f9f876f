import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Actor } from '@tws/proto-types/generated/tasks/v1/Actor';
import type { Principal } from '../../domain/auth/principal.js';
import { assertPathId, errorResponses, NoContent, PathId } from '../schemas/common.js';
import { CommentPage, CommentsQuery, CommentText, toComment } from './schemas.js';

export { CommentText };

/** Comments are attributed to the API key (shown with its name) or to the Bearer token's user. */
function actorOf(principal: Principal): Actor {
  return principal.kind === 'apiKey' ? { apiKeyId: principal.apiKeyId } : { userId: principal.userId };
}

/** GET and POST /v1/tasks/:id/comments, DELETE /v1/comments/:id. */
const commentRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/tasks/:id/comments',
    {
      config: { auth: true },
      schema: {
        tags: ['Comments'],
        operationId: 'listComments',
        summary: "A task's comments, oldest first, one page at a time",
        params: z.object({ id: PathId }),
        querystring: CommentsQuery,
        response: { 200: CommentPage, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      assertPathId(request.params.id, 'task');
      const page = await app.tasksApi.ListTaskComments({
        workspaceId: request.principal.workspaceId,
        taskId: request.params.id,
        limit: request.query.limit,
        cursor: request.query.cursor ?? '',
      });
      return { comments: page.comments.map(toComment), nextCursor: page.nextCursor || null };
    },
  );

  app.post(
    '/tasks/:id/comments',
    {
      config: { auth: true },
      schema: {
        tags: ['Comments'],
        operationId: 'createComment',
        summary: 'Comment on a task',
        params: z.object({ id: PathId }),
        body: z.strictObject({ text: CommentText }),
        response: { 201: z.object({ id: z.string() }).describe('Comment created'), ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      assertPathId(request.params.id, 'task');
      const created = await app.tasksApi.CreateComment({
        workspaceId: request.principal.workspaceId,
        taskId: request.params.id,
        text: request.body.text,
        actor: actorOf(request.principal),
      });
      return reply.code(201).send({ id: created.id });
    },
  );

  app.delete(
    '/comments/:id',
    {
      config: { auth: true },
      schema: {
        tags: ['Comments'],
        operationId: 'deleteComment',
        summary: 'Delete a comment',
        params: z.object({ id: PathId }),
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      assertPathId(request.params.id, 'comment');
      await app.tasksApi.DeleteComment({ workspaceId: request.principal.workspaceId, id: request.params.id });
      return reply.code(204).send();
    },
  );
};

export default commentRoutes;
