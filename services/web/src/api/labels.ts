import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkLabelInput, LabelFormProblem, labelsGuestRefusal } from '../domain/labels.js';
import type { WorkspaceMembership } from '../domain/people.js';
import type { Viewer } from './html/layout.js';
import { labelsPage, labelsPath, type LabelFormError } from './html/labels.js';
import { workspaceFor } from './settings.js';

const workspaceParams = z.object({ urlId: z.string().max(100) });
const labelParams = z.object({ urlId: z.string().max(100), id: z.string().max(100) });
const taskParams = z.object({ urlId: z.string().max(100), taskId: z.string().max(100) });
const taskLabelParams = z.object({ urlId: z.string().max(100), taskId: z.string().max(100), labelId: z.string().max(100) });
const listQuery = z.object({ notice: z.enum(['created', 'updated', 'deleted']).optional() });
// Over-long values are refused with a sentence at the field (the form's maxlength stops them first);
// BODY_LIMIT_BYTES bounds them here.
const labelBody = z.object({ _csrf: z.string().max(200).optional(), name: z.string().default(''), color: z.string().max(100).default('') });
const csrfBody = z.object({ _csrf: z.string().max(200).optional() });
const addBody = z.object({ _csrf: z.string().max(200).optional(), labelId: z.string().max(100).default('') });

/** The task page of the task `ref` (`{taskPrefix}-{number}`). */
const taskPagePath = (workspace: WorkspaceMembership, ref: string): string => `/${workspace.urlId}/task/${encodeURIComponent(ref)}`;

async function renderWithError(app: FastifyInstance, reply: FastifyReply, viewer: Viewer, workspace: WorkspaceMembership, error: LabelFormError, status: number) {
  const labels = await app.labels.list(workspace);
  return reply.page(labelsPage(viewer, workspace, labels, { error }), status);
}

/**
 * The labels of the workspace settings (list, create, rename/recolour, delete) and the label forms
 * of the task page (add, remove). Owners and members; guests get the refusal, non-members the 404.
 * Every POST is CSRF-checked (plugins/csrf.ts) and answers with a 303 (or the page with a sentence
 * at the field); the tasks service decides and writes each task's `task.updated`.
 */
export async function labelRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const session = { session: true } as const;

  app.get('/:urlId/settings/labels', { schema: { params: workspaceParams, querystring: listQuery }, config: session }, async (request, reply) => {
    const { viewer, workspace } = await workspaceFor(app, request, request.params.urlId, labelsGuestRefusal);
    const labels = await app.labels.list(workspace);
    return reply.page(labelsPage(viewer, workspace, labels, { notice: request.query.notice }));
  });

  app.post('/:urlId/settings/labels', { schema: { params: workspaceParams, body: labelBody }, config: session }, async (request, reply) => {
    const { viewer, workspace } = await workspaceFor(app, request, request.params.urlId, labelsGuestRefusal);
    const { name, color } = request.body;
    const checked = checkLabelInput({ name, color });
    const shown = { name: name.trim().slice(0, 50), color: /^#[0-9A-Fa-f]{6}$/.test(color) ? color.toLowerCase() : '#1d4ed8' };
    if ('problem' in checked) return renderWithError(app, reply, viewer, workspace, { message: checked.problem, ...shown }, 400);
    try {
      await app.labels.create(workspace, checked);
    } catch (error) {
      if (error instanceof LabelFormProblem) return renderWithError(app, reply, viewer, workspace, { message: error.message, ...shown }, error.statusCode);
      throw error;
    }
    return reply.redirect(`${labelsPath(workspace)}?notice=created`, 303);
  });

  app.post('/:urlId/settings/labels/:id', { schema: { params: labelParams, body: labelBody }, config: session }, async (request, reply) => {
    const { viewer, workspace } = await workspaceFor(app, request, request.params.urlId, labelsGuestRefusal);
    const { id } = request.params;
    const { name, color } = request.body;
    const checked = checkLabelInput({ name, color });
    const shown = { id, name: name.trim().slice(0, 50), color: /^#[0-9A-Fa-f]{6}$/.test(color) ? color.toLowerCase() : '#1d4ed8' };
    if ('problem' in checked) return renderWithError(app, reply, viewer, workspace, { message: checked.problem, ...shown }, 400);
    try {
      await app.labels.update(workspace, id, checked);
    } catch (error) {
      if (error instanceof LabelFormProblem) return renderWithError(app, reply, viewer, workspace, { message: error.message, ...shown }, error.statusCode);
      throw error;
    }
    return reply.redirect(`${labelsPath(workspace)}?notice=updated`, 303);
  });

  app.post('/:urlId/settings/labels/:id/delete', { schema: { params: labelParams, body: csrfBody }, config: session }, async (request, reply) => {
    const { workspace } = await workspaceFor(app, request, request.params.urlId, labelsGuestRefusal);
    await app.labels.delete(workspace, request.params.id);
    return reply.redirect(`${labelsPath(workspace)}?notice=deleted`, 303);
  });

  // The task page's forms (html/task-labels.ts): back to the task, which shows its labels now.
  app.post('/:urlId/tasks/:taskId/labels', { schema: { params: taskParams, body: addBody }, config: session }, async (request, reply) => {
    const { workspace } = await workspaceFor(app, request, request.params.urlId, labelsGuestRefusal);
    const changed = await app.labels.addToTask(workspace, request.params.taskId, request.body.labelId);
    return reply.redirect(taskPagePath(workspace, changed.ref), 303);
  });

  app.post('/:urlId/tasks/:taskId/labels/:labelId/remove', { schema: { params: taskLabelParams, body: csrfBody }, config: session }, async (request, reply) => {
    const { workspace } = await workspaceFor(app, request, request.params.urlId, labelsGuestRefusal);
    const changed = await app.labels.removeFromTask(workspace, request.params.taskId, request.params.labelId);
    return reply.redirect(taskPagePath(workspace, changed.ref), 303);
  });
}
