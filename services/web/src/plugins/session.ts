import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Pool } from '@tws/common';
import type { WebConfig } from '../config.js';
import { UserFacingError } from '../domain/errors.js';
import { csrfToken, type SecretKeys } from '../domain/secrets.js';
import { Sessions, type ActiveSession } from '../domain/sessions.js';

declare module 'fastify' {
  interface FastifyInstance {
    sessions: Sessions;
    /** Sets the session cookie (HttpOnly, SameSite=Lax, Path=/, Secure and `__Host-` behind https). */
    setSessionCookie(reply: FastifyReply, token: string): void;
    clearSessionCookie(reply: FastifyReply): void;
    /** The CSRF token forms of this session carry (plugins/csrf.ts checks it). */
    csrfTokenOf(session: ActiveSession): string;
  }
  interface FastifyRequest {
    /** The live session of this request's cookie, if any (looked up with both timeouts enforced). */
    session: ActiveSession | undefined;
  }
  interface FastifyContextConfig {
    /** `true`: signed-in people only (others are sent to sign in); `false`: the cookie is not even looked up (assets). */
    session?: boolean;
  }
}

export interface SessionOptions {
  config: WebConfig;
  pool: Pool;
  keys: SecretKeys;
}

/** Cookie names: `__Host-` (Secure, Path=/, no Domain: this host only) when the app is served over https. */
export function cookieNames(secure: boolean): { session: string; signIn: string } {
  const prefix = secure ? '__Host-' : '';
  return { session: `${prefix}tws_session`, signIn: `${prefix}tws_sign_in` };
}

/**
 * Server-side sessions (domain/sessions.ts) referenced by a cookie. Every request with the cookie
 * looks its session up, so an ended one (idle, too old, signed out, swept) is refused at once and
 * its cookie cleared; routes with `config: { session: true }` send signed-out people to sign in.
 */
async function sessionPlugin(app: FastifyInstance, options: SessionOptions): Promise<void> {
  const { config, keys } = options;
  const names = cookieNames(config.APP_SECURE);
  const cookieOptions = { path: '/', httpOnly: true, sameSite: 'lax', secure: config.APP_SECURE } as const;
  await app.register(cookie);
  const sessions = new Sessions(options.pool, {
    idleSeconds: config.SESSION_IDLE_TIMEOUT_S,
    absoluteSeconds: config.SESSION_ABSOLUTE_TIMEOUT_S,
  });
  app.decorate('sessions', sessions);
  app.decorate('setSessionCookie', (reply: FastifyReply, token: string) => void reply.setCookie(names.session, token, cookieOptions));
  app.decorate('clearSessionCookie', (reply: FastifyReply) => void reply.clearCookie(names.session, cookieOptions));
  app.decorate('csrfTokenOf', (session: ActiveSession) => csrfToken(keys.csrfKey, session.idHash));
  app.decorateRequest('session', undefined);

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const policy = request.routeOptions.config?.session;
    if (policy === false) return;
    const token = request.cookies[names.session];
    const session = token === undefined ? undefined : await sessions.resolve(token);
    request.session = session;
    if (token !== undefined && !session) app.clearSessionCookie(reply);
    if (session) {
      request.viewerForErrors = () => ({ email: session.email, csrfToken: app.csrfTokenOf(session), workspaces: [] });
    }
    if (policy !== true || session) return;
    if (request.method === 'GET' || request.method === 'HEAD') {
      const query = new URLSearchParams({ returnTo: request.url });
      if (token !== undefined) query.set('notice', 'session-ended');
      return reply.redirect(`/?${query.toString()}`, 303);
    }
    throw new UserFacingError(403, 'Signed out', 'Your session has ended, so this was not done. Sign in again, then retry.');
  });
}

export default fp(sessionPlugin, { name: 'session', dependencies: ['errors'] });
