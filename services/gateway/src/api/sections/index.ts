import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { assertPathId, BodyId, errorResponses, Name, PathId } from '../schemas/common.js';
import { Section, toSection } from '../schemas/resources.js';

/** GET /v1/projects/:projectId/sections, POST /v1/sections, PATCH /v1/sections/:id. */
const sectionRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/projects/:projectId/sections',
    {
      config: { auth: true },
      schema: {
        tags: ['Sections'],
        operationId: 'listSections',
        summary: 'Sections of a project, ordered by position',
        params: z.object({ projectId: PathId }),
        response: { 200: z.array(Section), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => {
      assertPathId(request.params.projectId, 'project');
      const { sections } = await app.tasksApi.ListSections({
        workspaceId: request.principal.workspaceId,
        projectId: request.params.projectId,
      });
      return sections.map(toSection);
    },
  );

  app.post(
    '/sections',
    {
      config: { auth: true },
      schema: {
        tags: ['Sections'],
        operationId: 'createSection',
        summary: 'Create a section at the end of a project',
        body: z.strictObject({ projectId: BodyId, name: Name }),
        response: { 201: z.object({ id: z.string() }).describe('Section created'), ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const created = await app.tasksApi.CreateSection({
        workspaceId: request.principal.workspaceId,
        projectId: request.body.projectId,
        name: request.body.name,
      });
      return reply.code(201).send({ id: created.id });
    },
  );

  app.patch(
    '/sections/:id',
    {
      config: { auth: true },
      schema: {
        tags: ['Sections'],
        operationId: 'updateSection',
        summary: 'Rename a section',
        params: z.object({ id: PathId }),
        body: z.strictObject({ name: Name }),
        response: { 200: Section.describe('The updated section'), ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request) => {
      assertPathId(request.params.id, 'section');
      const { section } = await app.tasksApi.UpdateSection({
        workspaceId: request.principal.workspaceId,
        id: request.params.id,
        name: request.body.name,
      });
      return toSection(section);
    },
  );
};

export default sectionRoutes;
