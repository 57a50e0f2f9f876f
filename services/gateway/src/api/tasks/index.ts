import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { DescriptionChange } from '@tws/proto-types/generated/tasks/v1/DescriptionChange';
import type { UpdateTaskRequest } from '@tws/proto-types/generated/tasks/v1/UpdateTaskRequest';
import { assertPathId, atLeastOneField, BodyId, errorResponses, Name, NoContent, PathId, textMaxLength } from '../schemas/common.js';
import { deleteTask } from '../../domain/tasks.js';
import { HttpError } from '../../plugins/errors.js';
import { entityTagOf } from '@tws/common';
import { conditionOf, IfMatch, ifMatchTags, IfNoneMatch, listTagOf, listVersionOf, NotModified, sendTagged } from './conditional.js';
import { Task, TaskListItem, toTask } from '../schemas/resources.js';
import type { AttachmentRoutesOptions } from '../attachments/schemas.js';
import { isPaged, nextPageLink, pageRequest, TaskListQuery } from './paging.js';
import { sendRenderedJson } from './rendered-json.js';

/** The public base URL (PUBLIC_BASE_URL) the `Link` of a paged list names. */
export type TaskRoutesOptions = Pick<AttachmentRoutesOptions, 'publicBaseUrl'>;

/** The tasks service's limit; deeper arrays are refused here already. */
const maxDescriptionDepth = 20;

/** Depth of nested `children` arrays, counted iteratively and given up on past `limit`. */
function nestingDepth(nodes: readonly unknown[], limit: number): number {
  let deepest = 0;
  const pending: Array<{ items: readonly unknown[]; depth: number }> = [{ items: nodes, depth: 1 }];
  for (let level = pending.pop(); level !== undefined; level = pending.pop()) {
    deepest = Math.max(deepest, level.depth);
    if (deepest > limit) return deepest;
    for (const item of level.items) {
      if (typeof item === 'object' && item !== null && 'children' in item && Array.isArray(item.children)) {
        pending.push({ items: item.children as unknown[], depth: level.depth + 1 });
      }
    }
  }
  return deepest;
}

const CreateTaskBody = z.strictObject({
  projectId: BodyId,
  listId: BodyId.meta({ description: 'A section of `projectId` (400 otherwise).' }),
  name: Name,
  assigneeId: BodyId.optional().meta({ description: 'A member `userId`.' }),
});

/**
 * A description is written as markdown (recommended), as a rich-text node array, or null to clear.
 * Nodes are checked only loosely here (objects with a `type`); the tasks service validates deeply.
 */
export const DescriptionInput = z
  .union([
    z.string().max(textMaxLength).meta({ description: 'Markdown' }),
    z
      .array(z.looseObject({ type: z.string().min(1) }).meta({ description: 'Rich-text node' }))
      .max(10_000)
      // Checked without recursion before anything recursive (JSON.stringify) touches a hostile array.
      .refine((nodes) => nestingDepth(nodes, maxDescriptionDepth) <= maxDescriptionDepth, {
        message: `is nested too deeply (max depth ${maxDescriptionDepth})`,
      })
      .meta({ description: 'Rich-text node array' }),
    z.null(),
  ])
  .meta({ description: 'Markdown string, rich-text node array, or null to clear. An empty string or array also clears.' });

const UpdateTaskBody = z
  .strictObject({
    name: Name.optional(),
    listId: BodyId.optional().meta({ description: 'Move to another section of the same project (400 otherwise).' }),
    isCompleted: z.boolean().optional().meta({ description: 'Also sets `statusId` to the matching system status.' }),
    statusId: BodyId.optional().meta({ description: 'Also sets `isCompleted` from the status.' }),
    assigneeId: BodyId.nullable().optional().meta({ description: 'A member `userId`, or null to unassign.' }),
    description: DescriptionInput.optional(),
  })
  .refine(atLeastOneField.check, { error: atLeastOneField.message })
  .meta({ minProperties: 1 });

function descriptionChange(description: z.output<typeof DescriptionInput>): DescriptionChange {
  if (description === null) return { clear: true };
  if (typeof description === 'string') return description.trim() === '' ? { clear: true } : { markdown: description };
  return description.length === 0 ? { clear: true } : { nodesJson: JSON.stringify(description) };
}

/** GET /v1/projects/:projectId/tasks, GET/PATCH/DELETE /v1/tasks/:id, POST /v1/tasks. */
const taskRoutes: FastifyPluginAsyncZod<TaskRoutesOptions> = async (app, options) => {
  app.get(
    '/projects/:projectId/tasks',
    {
      config: { auth: true },
      schema: {
        tags: ['Tasks'],
        operationId: 'listTasks',
        summary: 'Tasks of a project (list shape)',
        description:
          'Without query parameters: the whole list in display order (sections by position, tasks by `order`). ' +
          'Sends a strong `ETag`; with `If-None-Match` naming it, 304 and no body. ' +
          'With `limit`, `cursor` or a filter: one page of the (filtered) list in the same order, keyset-paged so tasks ' +
          'added meanwhile make no task be lost or repeated; the next page is the `Link: <…>; rel="next"` header (absent on the last page). ' +
          'Filters combine with AND.',
        params: z.object({ projectId: PathId }),
        querystring: TaskListQuery,
        headers: z.looseObject({ 'if-none-match': IfNoneMatch }),
        response: { 200: z.array(TaskListItem), 304: NotModified, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const condition = conditionOf(request.headers['if-none-match'], 'if-none-match');
      assertPathId(request.params.projectId, 'project');
      const { projectId } = request.params;
      if (isPaged(request.query)) {
        const page = await app.tasksApi.ListTaskPage(pageRequest(request.principal.workspaceId, projectId, request.query));
        if (page.next) reply.header('link', nextPageLink(options.publicBaseUrl, projectId, request.query, page.next));
        return sendTagged(reply, entityTagOf(page.tasksJson), condition, page.tasksJson, 'task list page');
      }
      const list = await app.taskListReader.read(request.principal.workspaceId, request.params.projectId, listVersionOf(condition));
      return sendTagged(reply, listTagOf(list.version), condition, list.json, 'task list');
    },
  );

  app.get(
    '/tasks/:id',
    {
      config: { auth: true },
      schema: {
        tags: ['Tasks'],
        operationId: 'getTask',
        summary: 'One task (single shape, with description and labels)',
        description: 'Sends a strong `ETag` (a hash of the body); with `If-None-Match` naming it, 304 and no body. Use it as `If-Match` of a PATCH.',
        params: z.object({ id: PathId }),
        headers: z.looseObject({ 'if-none-match': IfNoneMatch }),
        response: { 200: Task, 304: NotModified, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const condition = conditionOf(request.headers['if-none-match'], 'if-none-match');
      assertPathId(request.params.id, 'task');
      const json = await app.taskReader.read(request.principal.workspaceId, request.params.id);
      if (json === null) throw new HttpError(404, 'task not found');
      return sendTagged(reply, entityTagOf(json), condition, json, 'task');
    },
  );

  app.post(
    '/tasks',
    {
      config: { auth: true },
      schema: {
        tags: ['Tasks'],
        operationId: 'createTask',
        summary: 'Create a task at the end of a section',
        description:
          '400 when `listId` is not a section of `projectId`; 403 when the workspace is on the free plan and already has 300 tasks. ' +
          'A description cannot be set at creation: PATCH it afterwards.',
        body: CreateTaskBody,
        response: {
          201: z.object({ id: z.string(), number: z.int32() }).describe('Task created'),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const { projectId, listId, name, assigneeId } = request.body;
      const created = await app.taskWriter.create({
        workspaceId: request.principal.workspaceId,
        projectId,
        listId,
        name,
        ...(assigneeId !== undefined ? { assigneeId } : {}),
      });
      return reply.code(201).send({ id: created.id, number: created.number });
    },
  );

  app.patch(
    '/tasks/:id',
    {
      config: { auth: true },
      schema: {
        tags: ['Tasks'],
        operationId: 'updateTask',
        summary: 'Change a task; only the fields sent change',
        description:
          '`isCompleted` and `statusId` are kept in step; sending both with values that disagree gives 400. ' +
          'Setting a custom status (systemType null) makes the task not completed. ' +
          'With `If-Match` (the `ETag` of GET /v1/tasks/:id), the change applies only if the task is still as read: else 412 and nothing is written. ' +
          'The answer carries the task\'s new `ETag` (as GET /v1/tasks/:id would send it).',
        params: z.object({ id: PathId }),
        headers: z.looseObject({ 'if-match': IfMatch }),
        body: UpdateTaskBody,
        response: { 200: Task.describe('The updated task'), ...errorResponses(400, 401, 403, 404, 412, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const ifMatch = ifMatchTags(conditionOf(request.headers['if-match'], 'if-match'));
      assertPathId(request.params.id, 'task');
      const { name, listId, isCompleted, statusId, assigneeId, description } = request.body;
      const change: UpdateTaskRequest = { workspaceId: request.principal.workspaceId, id: request.params.id };
      if (ifMatch.length > 0) change.ifMatch = ifMatch;
      if (name !== undefined) change.name = name;
      if (listId !== undefined) change.listId = listId;
      if (isCompleted !== undefined) change.isCompleted = isCompleted;
      if (statusId !== undefined) change.statusId = statusId;
      if (assigneeId === null) change.clearAssignee = true;
      else if (assigneeId !== undefined) change.assigneeId = assigneeId;
      if (description !== undefined) change.description = descriptionChange(description);
      const { task, entityTag, taskJson } = await app.taskWriter.update(change);
      if (entityTag !== '') reply.header('etag', entityTag);
      // The JSON the write rendered: byte for byte what GET answers for this version, with its ETag.
      if (taskJson.length > 0) return sendRenderedJson(reply, taskJson, 'task');
      return toTask(task);
    },
  );

  app.delete(
    '/tasks/:id',
    {
      config: { auth: true },
      schema: {
        tags: ['Tasks'],
        operationId: 'deleteTask',
        summary: 'Delete a task and all its comments',
        params: z.object({ id: PathId }),
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      assertPathId(request.params.id, 'task');
      const backends = { tasks: app.tasksApi, attachments: app.attachmentsApi };
      await deleteTask(backends, request.principal.workspaceId, request.params.id, request.log);
      return reply.code(204).send();
    },
  );
};

export default taskRoutes;
