import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Counter } from 'prom-client';
import type { Logger } from '@tws/common';
import { RelyingParty, type SignInFlow } from '../clients/oidc.js';
import type { WebConfig } from '../config.js';
import { open, seal, type SecretKeys } from '../domain/secrets.js';
import { SignIn } from '../domain/sign-in.js';
import { cookieNames } from './session.js';

declare module 'fastify' {
  interface FastifyInstance {
    signIn: SignIn;
    /** Keeps a started sign-in's state, nonce, PKCE verifier and returnTo in a sealed cookie. */
    keepSignInFlow(reply: FastifyReply, flow: SignInFlow): void;
    /** The flow kept by `keepSignInFlow` (undefined when absent, tampered with or expired), and clears it. */
    takeSignInFlow(request: FastifyRequest, reply: FastifyReply): SignInFlow | undefined;
  }
}

export interface SignInOptions {
  config: WebConfig;
  keys: SecretKeys;
  logger: Logger;
  outcomes: Counter<'outcome'>;
}

function isFlow(value: unknown): value is SignInFlow {
  if (typeof value !== 'object' || value === null) return false;
  const flow = value as Record<string, unknown>;
  return ['state', 'nonce', 'codeVerifier', 'returnTo'].every((key) => typeof flow[key] === 'string');
}

/**
 * OpenID Connect sign-in: the relying party (clients/oidc.ts), the use case (domain/sign-in.ts),
 * and the flow cookie. The flow lives in the browser, sealed (AES-256-GCM, SESSION_SECRET) for
 * SIGN_IN_FLOW_TIMEOUT_S, so any replica can finish a sign-in another one started and nothing is
 * stored for an abandoned one. SameSite=Lax lets it come back on the provider's top-level redirect.
 */
async function signInPlugin(app: FastifyInstance, options: SignInOptions): Promise<void> {
  const { config, keys } = options;
  const name = cookieNames(config.APP_SECURE).signIn;
  const cookieOptions = { path: '/', httpOnly: true, sameSite: 'lax', secure: config.APP_SECURE } as const;
  const relyingParty = new RelyingParty({
    issuer: new URL(config.OIDC_ISSUER_URL),
    clientId: config.OIDC_CLIENT_ID,
    clientSecret: config.OIDC_CLIENT_SECRET,
    clientAuthMethod: config.OIDC_CLIENT_AUTH_METHOD,
    redirectUri: `${config.APP_URL}/auth/callback`,
    timeoutMs: config.OIDC_HTTP_TIMEOUT_MS,
    logger: options.logger,
  });
  app.decorate('signIn', new SignIn(relyingParty, app.people, app.sessions, options.outcomes));
  app.decorate('keepSignInFlow', (reply: FastifyReply, flow: SignInFlow) => {
    void reply.setCookie(name, seal(keys.cookieKey, name, flow, config.SIGN_IN_FLOW_TIMEOUT_S), {
      ...cookieOptions,
      maxAge: config.SIGN_IN_FLOW_TIMEOUT_S,
    });
  });
  app.decorate('takeSignInFlow', (request: FastifyRequest, reply: FastifyReply) => {
    const sealed = request.cookies[name];
    if (sealed === undefined) return undefined;
    void reply.clearCookie(name, cookieOptions);
    const flow = open(keys.cookieKey, name, sealed);
    return isFlow(flow) ? flow : undefined;
  });
}

export default fp(signInPlugin, { name: 'sign-in', dependencies: ['backends', 'session'] });
