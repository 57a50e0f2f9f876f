import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type Provider from 'oidc-provider';
import type { Histogram } from 'prom-client';
import { endHttpServerSpan, observeRequestLatency, type Logger, type Pool } from '@tws/common';
import { errorPage } from '../api/html/pages.js';
import type { WebConfig } from '../config.js';
import { ConnectedApps } from '../domain/connected-apps.js';
import { UserFacingError } from '../domain/errors.js';
import { registrationErrorCode, registrationLimits, registrationRequest } from '../domain/oauth-clients.js';
import { buildOAuthProvider, oauthRoutes } from '../domain/oauth-provider.js';
import { GrantRevocationAnnouncer } from '../domain/grant-revocations.js';
import { markGrantAnnounced, PostgresAdapter, recordRevokedGrant, unannouncedGrants } from '../store/oauth-models.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The authorization server (oidc-provider); the interactions and connected apps use it. */
    oauthProvider: Provider;
    /** The person's grants (connected apps): list, revoke, sweep. */
    connectedApps: ConnectedApps;
    /** Pushes revoked grants to the gateways; the sweeper resumes the ones never acknowledged. */
    grantRevocations: GrantRevocationAnnouncer;
  }
  interface FastifyContextConfig {
    /** `false`: no Origin/CSRF-token check (the OAuth endpoints, called by other apps, not by our forms). */
    csrf?: boolean;
  }
}

export interface OAuthOptions {
  config: WebConfig;
  pool: Pool;
  logger: Logger;
  httpRequestDuration: Histogram<'method' | 'route' | 'status_code'>;
}

/** JSON errors of the registration endpoint (RFC 7591 §3.2.2 shape: `error` + `error_description`). */
function registrationError(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').type('application/json; charset=utf-8').send({ error, error_description: description });
}

/**
 * The authorization server mounted in the app. The issuer is APP_URL itself (not APP_URL/oauth):
 * RFC 8414 puts an issuer's metadata at `{origin}/.well-known/oauth-authorization-server{path}`,
 * so only an issuer without a path has it at `{app_url}/.well-known/oauth-authorization-server`.
 * Its endpoints live under /oauth/ (domain/oauth-provider.ts `oauthRoutes`); the app's routes and
 * the provider's never overlap.
 *
 * Requests are handed to oidc-provider's own (Koa) handler from an `onRequest` hook, before
 * fastify reads the body (oidc-provider reads and bounds its own bodies, 56 KiB), with Host and
 * X-Forwarded-Proto set from APP_URL: the URLs it writes into metadata and redirects never come
 * from a request's headers. Registration alone is parsed here first (zod: public clients, https or
 * loopback redirect URIs, 16 KiB), rate limited per client IP, then handed over.
 */
async function oauthPlugin(app: FastifyInstance, options: OAuthOptions): Promise<void> {
  const { config, pool, logger } = options;
  const appUrl = new URL(config.APP_URL);
  /**
   * Every revoked grant passes here once, after web.oauth_revoked_grants holds it: disconnected in
   * connected apps (with the person who did), or revoked by oidc-provider (a rotated refresh token
   * reused, RFC 7009, a code replayed). Pushed to every gateway replica through the tasks service
   * (domain/grant-revocations.ts): its access tokens (JWTs carrying `grant_id`) are refused at once.
   */
  const announcer = new GrantRevocationAnnouncer(app.tasksRevocations, {
    deadlineMs: config.REVOKE_DEADLINE_MS,
    logger,
    store: {
      announced: (grantId) => markGrantAnnounced(pool, grantId),
      unannounced: (withinSeconds) => unannouncedGrants(pool, withinSeconds, 100),
    },
  });
  app.decorate('grantRevocations', announcer);
  app.addHook('onClose', async () => announcer.close());
  const grantRevoked = async (grantId: string, actorUserId?: string): Promise<void> => {
    logger.info({ grantId, actorUserId }, 'grant revoked');
    await announcer.announce(grantId, actorUserId);
  };
  // oidc-provider calls revokeByGrantId once per model: the hook runs for the first call only.
  const onGrantRevoked = async (grantId: string): Promise<void> => {
    if (await recordRevokedGrant(pool, grantId, null)) await grantRevoked(grantId);
  };
  const provider = buildOAuthProvider({
    config,
    adapter: (name: string) => new PostgresAdapter(name, pool, onGrantRevoked),
    renderError: (ctx, title, message) => {
      ctx.type = 'html';
      ctx.set('cache-control', 'no-store');
      ctx.body = errorPage({ title, message }).toString();
    },
  });
  provider.on('server_error', (_ctx, error) => logger.error({ err: error }, 'authorization server error'));
  app.decorate('oauthProvider', provider);
  app.decorate('connectedApps', new ConnectedApps(pool, grantRevoked));
  const callback = provider.callback();

  const handOver = (request: FastifyRequest, reply: FastifyReply, url?: string): Promise<void> => {
    const raw = request.raw;
    raw.headers.host = appUrl.host;
    raw.headers['x-forwarded-proto'] = appUrl.protocol.slice(0, -1);
    delete raw.headers['x-forwarded-host'];
    if (!config.TRUST_PROXY) delete raw.headers['x-forwarded-for'];
    if (url !== undefined) raw.url = url;
    // A hijacked reply skips fastify's onResponse hooks: the RED histogram is observed and the
    // request's trace span ended here instead.
    const route = request.routeOptions.url ?? 'unmatched';
    reply.raw.once('finish', () => {
      observeRequestLatency(options.httpRequestDuration, { method: request.method, route, status_code: String(reply.raw.statusCode) }, reply.elapsedTime / 1000, request);
      endHttpServerSpan(request, reply.raw.statusCode);
    });
    // …and the headers set on the reply are not sent: the request id is set on the raw response.
    reply.raw.setHeader('x-request-id', request.id);
    reply.hijack();
    return Promise.resolve(callback(raw, reply.raw));
  };

  const open = { session: false, csrf: false } as const;
  const delegated = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    // RFC 6749 §3.3: a request without `scope` is processed with the default, `read write` (the person still chooses on the consent page).
    if (request.method === 'GET' && request.url.startsWith(`${oauthRoutes.authorization}?`)) {
      const url = new URL(request.url, appUrl);
      if (!url.searchParams.get('scope')?.trim()) {
        url.searchParams.set('scope', 'read write');
        return handOver(request, reply, `${url.pathname}${url.search}`);
      }
    }
    return handOver(request, reply);
  };
  const unreachable = async (): Promise<void> => undefined;
  // oidc-provider serves both metadata documents (RFC 8414's and OpenID discovery's, the same content).
  for (const url of ['/oauth/*', '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
    app.route({ method: ['GET', 'POST', 'OPTIONS'], url, config: open, onRequest: delegated, handler: unreachable });
  }

  await app.register(async (registration) => {
    registration.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: registrationLimits.maxBodyBytes }, (_request, body, done) => {
      try {
        done(null, JSON.parse(body as string) as unknown);
      } catch {
        done(Object.assign(new Error('The body is not valid JSON.'), { statusCode: 400 }), undefined);
      }
    });
    registration.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
      if (error instanceof UserFacingError) return registrationError(reply.headers(error.headers), error.statusCode, 'too_many_requests', error.message);
      const status = error.statusCode ?? 500;
      if (status === 413) return registrationError(reply, 413, 'invalid_request', `The registration is larger than ${registrationLimits.maxBodyBytes} bytes.`);
      if (status === 415) return registrationError(reply, 415, 'invalid_request', 'Send the registration as application/json.');
      if (status < 500) return registrationError(reply, status, 'invalid_request', error.message);
      request.log.error({ err: error }, 'registration failed');
      return registrationError(reply, 500, 'server_error', 'The registration could not be stored. Try again in a minute.');
    });
    registration.post(oauthRoutes.registration, { config: open, onRequest: app.registrationRateLimit }, async (request, reply) => {
      if (!request.headers['content-type']?.toLowerCase().startsWith('application/json')) {
        return registrationError(reply, 415, 'invalid_request', 'Send the registration as application/json.');
      }
      const parsed = registrationRequest.safeParse(request.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const field = typeof issue.path[0] === 'string' ? issue.path[0] : undefined;
        return registrationError(reply, 400, registrationErrorCode(field), `${field ?? 'body'}: ${issue.message}`);
      }
      // oidc-provider takes an already parsed body from `req.body` (its stream is consumed).
      (request.raw as typeof request.raw & { body?: unknown }).body = parsed.data;
      return handOver(request, reply);
    });
  });
}

export default fp(oauthPlugin, { name: 'oauth', dependencies: ['errors', 'rate-limit', 'session', 'csrf', 'backends'] });
