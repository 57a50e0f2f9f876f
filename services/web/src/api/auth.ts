import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { UserFacingError } from '../domain/errors.js';
import { maxReturnToLength, safeReturnTo } from '../domain/return-to.js';

const signInQuery = z.object({ returnTo: z.string().max(maxReturnToLength).optional() });
/** What a provider sends back (RFC 6749 §4.1.2, RFC 9207 `iss`); bounded, other parameters ignored. */
const callbackQuery = z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(1024).optional(),
  iss: z.string().max(2048).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
});

/**
 * The end of a successful sign-in: the session this browser had ends (a new id at every sign-in:
 * no fixation), the new one's cookie is set, and the person lands on `returnTo`.
 */
export async function startSession(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, token: string, returnTo: string): Promise<FastifyReply> {
  if (request.session) await app.sessions.end(request.session.idHash);
  app.setSessionCookie(reply, token);
  return reply.header('cache-control', 'no-store').redirect(returnTo, 303);
}

/** GET /auth/sign-in, GET /auth/callback, POST /auth/sign-out. */
export async function authRoutes(root: FastifyInstance, options: { appUrl: string }): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const limited = { onRequest: app.signInRateLimit };

  // Starts a sign-in at the provider: authorization code + PKCE (S256), state and nonce, kept in a
  // sealed cookie until the callback. `returnTo` must be a path of this app (no open redirect).
  app.get('/auth/sign-in', { schema: { querystring: signInQuery }, ...limited }, async (request, reply) => {
    const asked = request.query.returnTo;
    const returnTo = asked === undefined ? undefined : safeReturnTo(asked);
    if (asked !== undefined && returnTo === undefined) {
      throw new UserFacingError(400, 'Link refused', 'This sign-in link would send you outside this app, so it was refused. Start again from the sign-in page.');
    }
    const { url, flow } = await app.signIn.begin(returnTo);
    app.keepSignInFlow(reply, flow);
    return reply.header('cache-control', 'no-store').redirect(url.href, 303);
  });

  // The provider's redirect back: the code exchange, then a session for a member's verified email.
  app.get('/auth/callback', { schema: { querystring: callbackQuery }, ...limited }, async (request, reply) => {
    const flow = app.takeSignInFlow(request, reply);
    const { token, returnTo } = await app.signIn.finish(new URL(request.url, options.appUrl), flow);
    return startSession(app, request, reply, token, returnTo);
  });

  // CSRF-checked like every POST (plugins/csrf.ts).
  app.post('/auth/sign-out', { config: { session: true } }, async (request, reply) => {
    if (request.session) await app.sessions.end(request.session.idHash);
    app.clearSessionCookie(reply);
    return reply.redirect('/?notice=signed-out', 303);
  });
}
