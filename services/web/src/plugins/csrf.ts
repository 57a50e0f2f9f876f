import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { UserFacingError } from '../domain/errors.js';
import { csrfTokenMatches, type SecretKeys } from '../domain/secrets.js';

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

const refused = (): UserFacingError =>
  new UserFacingError(403, 'Request refused', 'This form was sent from another site or has expired, so it was refused. Reload the page and try again.');

/** The origin a request says it comes from: Origin, else Referer's origin; undefined when neither is usable. */
function requestOrigin(request: FastifyRequest): string | undefined {
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== 'null') return origin;
  if (origin === 'null') return undefined;
  const referer = request.headers.referer;
  if (typeof referer !== 'string') return undefined;
  return URL.parse(referer)?.origin;
}

/**
 * CSRF protection of every state-changing request (POST, PUT, PATCH, DELETE), two checks that must
 * both pass (OWASP's defence in depth):
 * 1. the request comes from this app: Origin (or, without it, Referer) equals APP_URL's origin —
 *    checked before the body is read, so a cross-site post is refused without parsing it;
 * 2. it carries the session's synchronizer token (an HMAC of the session id: the form's hidden
 *    `_csrf` field or an `X-CSRF-Token` header), so it needs a live session too.
 * SameSite=Lax on the session cookie is a third, browser-side layer.
 */
async function csrfPlugin(app: FastifyInstance, options: { appUrl: string; keys: SecretKeys }): Promise<void> {
  app.addHook('onRequest', async (request) => {
    if (safeMethods.has(request.method) || request.routeOptions.config?.csrf === false) return;
    if (requestOrigin(request) !== options.appUrl) throw refused();
  });
  app.addHook('preHandler', async (request) => {
    if (safeMethods.has(request.method) || request.routeOptions.config?.csrf === false) return;
    const session = request.session;
    const body = request.body as Record<string, unknown> | undefined;
    const presented = request.headers['x-csrf-token'] ?? (typeof body === 'object' && body !== null ? body._csrf : undefined);
    if (!session || !csrfTokenMatches(options.keys.csrfKey, session.idHash, presented)) throw refused();
  });
}

// Registered before the session plugin, so a cross-site post is refused before its cookie is looked up;
// the token check (preHandler) reads the request's session, which that plugin's onRequest hook sets.
export default fp(csrfPlugin, { name: 'csrf', dependencies: ['errors'] });
