import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UserFacingError } from '../domain/errors.js';
import type { Viewer } from './html/layout.js';

/**
 * The signed-in person of a `session: true` route with their workspaces, asked of the tasks
 * service now (so a removed membership is gone from the very next page). A person who belongs to
 * no workspace any more is signed out.
 */
export async function viewerOf(app: FastifyInstance, request: FastifyRequest): Promise<Viewer> {
  const session = request.session;
  if (!session) throw new Error('viewerOf needs a route with config.session = true');
  const workspaces = await app.people.workspacesOf(session.email);
  if (workspaces.length === 0) {
    await app.sessions.end(session.idHash);
    request.session = undefined;
    request.viewerForErrors = undefined;
    throw new UserFacingError(
      403,
      `No workspace for ${session.email}`,
      `There is no workspace for ${session.email} any more, so you have been signed out. Ask a workspace owner to add this email address, then sign in again.`,
    );
  }
  return { email: session.email, csrfToken: app.csrfTokenOf(session), workspaces };
}
