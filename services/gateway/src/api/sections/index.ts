import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { assertPathId, BodyId, errorResponses, Name, PathId } from '../schemas/common.js';
import { Section, toSection } from '../schemas/resources.js';
import { entityTagOf } from '@tws/common';
import { conditionOf, IfMatch, ifMatchTags, IfNoneMatch, NotModified, renderJson, sendTagged } from '../tasks/conditional.js';

const SectionList = z.array(Section);

/** GET /v1/projects/:projectId/sections, POST /v1/sections, GET/PATCH /v1/sections/:id (the GET of one is an addition). */
const sectionRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/projects/:projectId/sections',
    {
      config: { auth: true },
      schema: {
        tags: ['Sections'],
        operationId: 'listSections',
        summary: 'Sections of a project, ordered by position',
        description: 'Sends a strong `ETag` (a hash of the body); with `If-None-Match` naming it, 304 and no body.',
        params: z.object({ projectId: PathId }),
        headers: z.looseObject({ 'if-none-match': IfNoneMatch }),
        response: { 200: SectionList, 304: NotModified, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const condition = conditionOf(request.headers['if-none-match'], 'if-none-match');
      assertPathId(request.params.projectId, 'project');
      const { sections } = await app.tasksApi.ListSections({
        workspaceId: request.principal.workspaceId,
        projectId: request.params.projectId,
      });
      const json = renderJson(SectionList, sections.map(toSection), 'section list');
      return sendTagged(reply, entityTagOf(json), condition, json, 'section list');
    },
  );

  app.get(
    '/sections/:id',
    {
      config: { auth: true },
      schema: {
        tags: ['Sections'],
        operationId: 'getSection',
        summary: 'One section (the list item shape)',
        description:
          'Sends a strong `ETag` (it changes with every change of the section); with `If-None-Match` naming it, 304 and no body. ' +
          'Use it as `If-Match` of PATCH /v1/sections/:id.',
        params: z.object({ id: PathId }),
        headers: z.looseObject({ 'if-none-match': IfNoneMatch }),
        response: { 200: Section, 304: NotModified, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const condition = conditionOf(request.headers['if-none-match'], 'if-none-match');
      assertPathId(request.params.id, 'section');
      const { section } = await app.tasksApi.GetSection({ workspaceId: request.principal.workspaceId, id: request.params.id });
      if (!section) throw new Error('GetSection answered without a section');
      return sendTagged(reply, section.entityTag, condition, renderJson(Section, toSection(section), 'section'), 'section');
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
        description:
          'With `If-Match` (the `ETag` of GET /v1/sections/:id), the change applies only if the section is still as read: else 412 and nothing is written. ' +
          'The answer carries the new `ETag`.',
        params: z.object({ id: PathId }),
        headers: z.looseObject({ 'if-match': IfMatch }),
        body: z.strictObject({ name: Name }),
        response: { 200: Section.describe('The updated section'), ...errorResponses(400, 401, 403, 404, 412, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const ifMatch = ifMatchTags(conditionOf(request.headers['if-match'], 'if-match'));
      assertPathId(request.params.id, 'section');
      const { section } = await app.tasksApi.UpdateSection({
        workspaceId: request.principal.workspaceId,
        id: request.params.id,
        name: request.body.name,
        ...(ifMatch.length > 0 ? { ifMatch } : {}),
      });
      if (!section) throw new Error('UpdateSection answered without a section');
      if (section.entityTag !== '') reply.header('etag', section.entityTag);
      return toSection(section);
    },
  );
};

export default sectionRoutes;
