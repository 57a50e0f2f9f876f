import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AddRefused, maxEmailLength, membersGuestRefusal, roleOptions } from '../domain/members.js';
import type { WorkspaceMembership } from '../domain/people.js';
import type { Viewer } from './html/layout.js';
import { membersNotices, membersPage, membersPath, type AddFormState } from './html/members.js';
import { workspaceFor } from './settings.js';

const workspaceParams = z.object({ urlId: z.string().max(100) });
const memberParams = z.object({ urlId: z.string().max(100), userId: z.string().max(100) });
const listQuery = z.object({ notice: z.enum(membersNotices).optional() });
const role = z.enum(roleOptions);
// An address over the limit is refused below with a sentence at the field (the form's maxlength stops
// it first); BODY_LIMIT_BYTES bounds it here.
const addBody = z.object({ _csrf: z.string().max(200).optional(), email: z.string().default(''), role: role.default('member') });
const roleBody = z.object({ _csrf: z.string().max(200).optional(), role });
const removeBody = z.object({ _csrf: z.string().max(200).optional() });

async function renderList(app: FastifyInstance, reply: FastifyReply, viewer: Viewer, workspace: WorkspaceMembership, error: AddFormState & { status: number }) {
  const listed = await app.members.list(workspace);
  return reply.page(membersPage(viewer, workspace, listed, { error }), error.status);
}

/** Where to go after changing oneself: a person who can no longer see the members goes to their workspaces. */
const afterChange = (workspace: WorkspaceMembership, userId: string, lostAccess: boolean, notice: string): string =>
  lostAccess && userId.toLowerCase() === workspace.userId.toLowerCase() ? '/workspaces' : `${membersPath(workspace)}?notice=${notice}`;

/**
 * The members of the workspace settings: the list (owners and members), and for owners the add form,
 * the role change and the removal (CSRF-checked posts; the tasks service decides, and answers a role
 * change or removal once every gateway applied it).
 */
export async function memberRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const session = { session: true } as const;

  app.get('/:urlId/settings/members', { schema: { params: workspaceParams, querystring: listQuery }, config: session }, async (request, reply) => {
    const { viewer, workspace } = await workspaceFor(app, request, request.params.urlId, membersGuestRefusal);
    const listed = await app.members.list(workspace);
    return reply.page(membersPage(viewer, workspace, listed, { notice: request.query.notice }));
  });

  app.post('/:urlId/settings/members', { schema: { params: workspaceParams, body: addBody }, config: session }, async (request, reply) => {
    const { viewer, workspace } = await workspaceFor(app, request, request.params.urlId, membersGuestRefusal);
    const email = request.body.email.trim();
    const chosen = request.body.role;
    if (email.length === 0 || email.length > maxEmailLength) {
      const message = email.length === 0 ? 'Enter the email address of the person to add.' : `The address is ${email.length} characters long; an email address has at most ${maxEmailLength}.`;
      return renderList(app, reply, viewer, workspace, { status: 400, message, email: email.slice(0, maxEmailLength), role: chosen });
    }
    try {
      await app.members.add(workspace, email, chosen);
    } catch (error) {
      if (!(error instanceof AddRefused)) throw error;
      return renderList(app, reply, viewer, workspace, { status: error.statusCode, message: error.message, email, role: chosen });
    }
    return reply.redirect(`${membersPath(workspace)}?notice=added`, 303);
  });

  app.post('/:urlId/settings/members/:userId/role', { schema: { params: memberParams, body: roleBody }, config: session }, async (request, reply) => {
    const { workspace } = await workspaceFor(app, request, request.params.urlId, membersGuestRefusal);
    await app.members.changeRole(workspace, request.params.userId, request.body.role);
    return reply.redirect(afterChange(workspace, request.params.userId, request.body.role === 'guest', 'changed'), 303);
  });

  app.post('/:urlId/settings/members/:userId/remove', { schema: { params: memberParams, body: removeBody }, config: session }, async (request, reply) => {
    const { workspace } = await workspaceFor(app, request, request.params.urlId, membersGuestRefusal);
    await app.members.remove(workspace, request.params.userId);
    return reply.redirect(afterChange(workspace, request.params.userId, true, 'removed'), 303);
  });
}
