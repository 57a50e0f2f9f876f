import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { assertPathId, atLeastOneField, errorResponses, Name, PathId, textMaxLength } from '../schemas/common.js';
import { Project, toProject } from '../schemas/resources.js';

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

/** GET/POST /v1/projects, PATCH /v1/projects/:id. */
const projectRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/projects',
    {
      config: { auth: true },
      schema: {
        tags: ['Projects'],
        operationId: 'listProjects',
        summary: 'Projects of the workspace',
        response: { 200: z.array(Project), ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => {
      const { projects } = await app.tasksApi.ListProjects({ workspaceId: request.principal.workspaceId });
      return projects.map(toProject);
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
        params: z.object({ id: PathId }),
        body: UpdateProjectBody,
        response: { 200: z.object({ id: z.string() }).describe('Project updated'), ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request) => {
      assertPathId(request.params.id, 'project');
      const { name, description } = request.body;
      const clear = description === null || (description !== undefined && isBlank(description));
      const updated = await app.tasksApi.UpdateProject({
        workspaceId: request.principal.workspaceId,
        id: request.params.id,
        ...(name !== undefined ? { name } : {}),
        ...(description !== undefined && description !== null && !clear ? { description } : {}),
        clearDescription: clear,
      });
      return { id: updated.id };
    },
  );
};

export default projectRoutes;
