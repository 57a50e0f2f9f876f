import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { defaultLanding, maxReturnToLength, safeReturnTo } from '../domain/return-to.js';
import { landingPage, workspacesPage } from './html/pages.js';
import { viewerOf } from './viewer.js';

const landingQuery = z.object({
  returnTo: z.string().max(maxReturnToLength).optional(),
  notice: z.enum(['signed-out', 'session-ended']).optional(),
});

/** The people-facing pages: the landing (sign-in) page and the workspace list (settings: settings.ts). */
export async function pageRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get('/', { schema: { querystring: landingQuery } }, async (request, reply) => {
    if (request.session) return reply.redirect(defaultLanding, 303);
    return reply.page(landingPage({ returnTo: safeReturnTo(request.query.returnTo), notice: request.query.notice }));
  });

  app.get('/workspaces', { config: { session: true } }, async (request, reply) => reply.page(workspacesPage(await viewerOf(app, request))));
}
