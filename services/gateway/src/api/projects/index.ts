import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { assertPathId, atLeastOneField, errorResponses, Name, PathId, textMaxLength } from '../schemas/common.js';
import { Project, toProject } from '../schemas/resources.js';
import { entityTagOf } from '@tws/common';
import { conditionOf, IfMatch, ifMatchTags, IfNoneMatch, NotModified, renderJson, sendTagged } from '../tasks/conditional.js';

const ProjectList = z.array(Project);

const Description = z.string().max(textMaxLength);

const CreateProjectBody = z.strictObject({
  name: Name,
  description: Description.optional().meta({ description: 'Plain text; empty means none.' }),
});

const UpdateProjectBody = z
  .strictObject({
    name: Name.optional(),
    description: Description.nullable().optional().meta({ description: 'New description; null (or "") clears it.' }),
  })
  .refine(atLeastOneField.check, { error: atLeastOneField.message })
  .meta({ minProperties: 1 });

/** Blank descriptions are stored as none (DESIGN: empty-string description is null). */
const isBlank = (text: string): boolean => text.trim() === '';

/** GET/POST /v1/projects, GET/PATCH /v1/projects/:id (the GET of one is an addition to the contract). */
const projectRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/projects',
    {
      config: { auth: true },
      schema: {
        tags: ['Projects'],
        operationId: 'listProjects',
        summary: 'Projects of the workspace',
        description: 'Sends a strong `ETag` (a hash of the body); with `If-None-Match` naming it, 304 and no body.',
        headers: z.looseObject({ 'if-none-match': IfNoneMatch }),
        response: { 200: ProjectList, 304: NotModified, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const condition = conditionOf(request.headers['if-none-match'], 'if-none-match');
      const { projects } = await app.tasksApi.ListProjects({ workspaceId: request.principal.workspaceId });
      const json = renderJson(ProjectList, projects.map(toProject), 'project list');
      return sendTagged(reply, entityTagOf(json), condition, json, 'project list');
    },
  );

  app.get(
    '/projects/:id',
    {
      config: { auth: true },
      schema: {
        tags: ['Projects'],
        operationId: 'getProject',
        summary: 'One project (the list item shape)',
        description:
          'Sends a strong `ETag` (it changes with every change of the project); with `If-None-Match` naming it, 304 and no body. ' +
          'Use it as `If-Match` of PATCH /v1/projects/:id.',
        params: z.object({ id: PathId }),
        headers: z.looseObject({ 'if-none-match': IfNoneMatch }),
        response: { 200: Project, 304: NotModified, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const condition = conditionOf(request.headers['if-none-match'], 'if-none-match');
      assertPathId(request.params.id, 'project');
      const { project } = await app.tasksApi.GetProject({ workspaceId: request.principal.workspaceId, id: request.params.id });
      if (!project) throw new Error('GetProject answered without a project');
      const json = renderJson(Project, toProject(project), 'project');
      return sendTagged(reply, project.entityTag, condition, json, 'project');
    },
  );

  app.post(
    '/projects',
    {
      config: { auth: true },
      schema: {
        tags: ['Projects'],
        operationId: 'createProject',
        summary: 'Create a project (with a default "To Do" section)',
        description: '403 when the workspace is on the free plan and already has 3 projects.',
        body: CreateProjectBody,
        response: {
          201: z
            .object({ id: z.string(), defaultListId: z.string().meta({ description: 'Id of the default "To Do" section.' }) })
            .describe('Project created'),
          ...errorResponses(400, 401, 403, 413, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const { name, description } = request.body;
      const created = await app.tasksApi.CreateProject({
        workspaceId: request.principal.workspaceId,
        name,
        ...(description !== undefined && !isBlank(description) ? { description } : {}),
      });
      return reply.code(201).send({ id: created.id, defaultListId: created.defaultListId });
    },
  );

  app.patch(
    '/projects/:id',
    {
      config: { auth: true },
      schema: {
        tags: ['Projects'],
        operationId: 'updateProject',
        summary: 'Rename a project or change its description',
        description:
          'With `If-Match` (the `ETag` of GET /v1/projects/:id), the change applies only if the project is still as read: else 412 and nothing is written. ' +
          'The answer carries the new `ETag`.',
        params: z.object({ id: PathId }),
        headers: z.looseObject({ 'if-match': IfMatch }),
        body: UpdateProjectBody,
        response: { 200: z.object({ id: z.string() }).describe('Project updated'), ...errorResponses(400, 401, 403, 404, 412, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const ifMatch = ifMatchTags(conditionOf(request.headers['if-match'], 'if-match'));
      assertPathId(request.params.id, 'project');
      const { name, description } = request.body;
      const clear = description === null || (description !== undefined && isBlank(description));
      const updated = await app.tasksApi.UpdateProject({
        workspaceId: request.principal.workspaceId,
        id: request.params.id,
        ...(name !== undefined ? { name } : {}),
        ...(description !== undefined && description !== null && !clear ? { description } : {}),
        clearDescription: clear,
        ...(ifMatch.length > 0 ? { ifMatch } : {}),
      });
      if (updated.entityTag !== '') reply.header('etag', updated.entityTag);
      return { id: updated.id };
    },
  );
};

export default projectRoutes;
