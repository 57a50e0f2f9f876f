import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { defaultLanding, maxReturnToLength, safeReturnTo } from '../domain/return-to.js';
import { notFoundError } from '../plugins/errors.js';
import { landingPage, settingsPage, workspacesPage } from './html/pages.js';
import { viewerOf } from './viewer.js';

const landingQuery = z.object({
  returnTo: z.string().max(maxReturnToLength).optional(),
  notice: z.enum(['signed-out', 'session-ended']).optional(),
});
/** Any text: a url id that is not one of the person's workspaces is a 404 like any unknown page. */
const workspaceParams = z.object({ urlId: z.string().max(100) });

/** The people-facing pages: the landing (sign-in) page, the workspace list, a workspace's settings. */
export async function pageRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get('/', { schema: { querystring: landingQuery } }, async (request, reply) => {
    if (request.session) return reply.redirect(defaultLanding, 303);
    return reply.page(landingPage({ returnTo: safeReturnTo(request.query.returnTo), notice: request.query.notice }));
  });

  app.get('/workspaces', { config: { session: true } }, async (request, reply) => reply.page(workspacesPage(await viewerOf(app, request))));

  // A placeholder for this slice: the settings (keys, webhooks, labels, members) come next. A
  // workspace the person is not a member of answers the same 404 as one that does not exist.
  app.get('/:urlId/settings', { schema: { params: workspaceParams }, config: { session: true } }, async (request, reply) => {
    const viewer = await viewerOf(app, request);
    const workspace = viewer.workspaces.find((candidate) => candidate.urlId === request.params.urlId);
    if (!workspace) throw notFoundError();
    return reply.page(settingsPage(viewer, workspace));
  });
}
