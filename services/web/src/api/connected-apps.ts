import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFoundError } from '../plugins/errors.js';
import { connectedAppsPage, connectedAppsPath } from './html/oauth.js';
import { viewerOf } from './viewer.js';

const listQuery = z.object({ notice: z.enum(['revoked']).optional() });
const grantParams = z.object({ grantId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/) });

/**
 * /account/connected-apps: the apps a person allowed (OAuth grants), per person not per
 * workspace (one grant covers every workspace of the person). Disconnecting revokes the grant:
 * its refresh tokens and codes are deleted and its id recorded in web.oauth_revoked_grants.
 */
export async function connectedAppsRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get(connectedAppsPath, { schema: { querystring: listQuery }, config: { session: true } }, async (request, reply) => {
    const viewer = await viewerOf(app, request);
    const grants = await app.connectedApps.list(viewer.workspaces[0]!.userId);
    return reply.page(connectedAppsPage(viewer, grants, request.query.notice));
  });

  app.post(`${connectedAppsPath}/:grantId/revoke`, { schema: { params: grantParams }, config: { session: true } }, async (request, reply) => {
    const viewer = await viewerOf(app, request);
    // Another person's grant and no grant at all are the same 404.
    if (!(await app.connectedApps.revoke(viewer.workspaces[0]!.userId, request.params.grantId))) throw notFoundError();
    return reply.redirect(`${connectedAppsPath}?notice=revoked`, 303);
  });
}
