import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { bindActor } from '@tws/common';
import { guestRefusal, maxKeyNameLength } from '../domain/api-keys.js';
import { UserFacingError } from '../domain/errors.js';
import type { WorkspaceMembership } from '../domain/people.js';
import { notFoundError } from '../plugins/errors.js';
import type { Viewer } from './html/layout.js';
import { apiKeysPage, apiKeysPath, createdKeyPage, settingsIndexPage } from './html/settings.js';
import { viewerOf } from './viewer.js';

/** Any text: a url id that is not one of the person's workspaces is a 404 like any unknown page. */
const workspaceParams = z.object({ urlId: z.string().max(100) });
const keyParams = z.object({ urlId: z.string().max(100), id: z.string().max(100) });
const listQuery = z.object({ notice: z.enum(['revoked']).optional() });
// A name over the limit is refused below with a sentence at the field (the form's maxlength stops it
// first); BODY_LIMIT_BYTES bounds it here.
const createBody = z.object({ _csrf: z.string().max(200).optional(), name: z.string().default('') });
const revokeBody = z.object({ _csrf: z.string().max(200).optional() });

const settingsRefusal = (): UserFacingError =>
  new UserFacingError(
    403,
    'Guests cannot change settings',
    'Guests cannot see or change workspace settings. Ask an owner of this workspace if you need an API key or a change.',
  );

/**
 * The signed-in person and the workspace of the address. Not one of their workspaces: the same 404
 * as an address that does not exist (a url id reveals nothing). A guest: the refusal, and no data.
 */
export async function workspaceFor(app: FastifyInstance, request: Parameters<typeof viewerOf>[1], urlId: string, refusal: () => UserFacingError) {
  const viewer = await viewerOf(app, request);
  const workspace = viewer.workspaces.find((candidate) => candidate.urlId === urlId);
  if (!workspace) throw notFoundError();
  // Shown with the person's header (switcher, sign-out) on the refusal page too.
  request.viewerForErrors = () => ({ ...viewer, current: workspace.urlId });
  if (workspace.role === 'guest') throw refusal();
  // What this request changes in the workspace is audited as this person's doing.
  bindActor({ type: 'user', id: workspace.userId, name: null });
  return { viewer, workspace };
}

/**
 * The page that shows a new key runs the app's one script (its copy button): this response alone
 * allows scripts from this origin (`script-src 'self'`; no inline script anywhere).
 */
function allowOwnScripts(reply: FastifyReply): void {
  const policy = reply.getHeader('content-security-policy');
  if (typeof policy === 'string') reply.header('content-security-policy', policy.replace("script-src 'none'", "script-src 'self'"));
}

async function renderList(app: FastifyInstance, reply: FastifyReply, viewer: Viewer, workspace: WorkspaceMembership, error?: { message: string; name: string }) {
  const listed = await app.apiKeys.list(workspace);
  return reply.page(apiKeysPage(viewer, workspace, listed, { error }), error ? 400 : 200);
}

/** The workspace settings: the index, and the API keys (list, create, revoke). */
export async function settingsRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const session = { session: true } as const;

  app.get('/:urlId/settings', { schema: { params: workspaceParams }, config: session }, async (request, reply) => {
    const { viewer, workspace } = await workspaceFor(app, request, request.params.urlId, settingsRefusal);
    return reply.page(settingsIndexPage(viewer, workspace));
  });

  app.get('/:urlId/settings/api-keys', { schema: { params: workspaceParams, querystring: listQuery }, config: session }, async (request, reply) => {
    const { viewer, workspace } = await workspaceFor(app, request, request.params.urlId, guestRefusal);
    const listed = await app.apiKeys.list(workspace);
    return reply.page(apiKeysPage(viewer, workspace, listed, { notice: request.query.notice }));
  });

  // CSRF-checked (plugins/csrf.ts). The answer is the page that shows the key, once; it is never
  // stored, so reloading it does not show it again (the browser offers to post again, which creates another key).
  app.post('/:urlId/settings/api-keys', { schema: { params: workspaceParams, body: createBody }, config: session }, async (request, reply) => {
    const { viewer, workspace } = await workspaceFor(app, request, request.params.urlId, guestRefusal);
    const name = request.body.name.trim();
    if (name.length === 0 || name.length > maxKeyNameLength) {
      const message = name.length === 0 ? 'Give the key a name, then create it.' : `The name is ${name.length} characters long; shorten it to at most ${maxKeyNameLength}.`;
      return renderList(app, reply, viewer, workspace, { message, name: name.slice(0, maxKeyNameLength) });
    }
    const created = await app.apiKeys.create(workspace, name);
    allowOwnScripts(reply);
    return reply.page(createdKeyPage(viewer, workspace, created), 201);
  });

  // CSRF-checked. The tasks service decides (members: their own keys; owners: any) and answers
  // once every gateway dropped the key; then back to the list.
  app.post('/:urlId/settings/api-keys/:id/revoke', { schema: { params: keyParams, body: revokeBody }, config: session }, async (request, reply) => {
    const { workspace } = await workspaceFor(app, request, request.params.urlId, guestRefusal);
    await app.apiKeys.revoke(workspace, request.params.id);
    return reply.redirect(`${apiKeysPath(workspace)}?notice=revoked`, 303);
  });
}
