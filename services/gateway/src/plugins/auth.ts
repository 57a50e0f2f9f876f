import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { bindActor, runWithActor, type AuditActor } from '@tws/common';
import { ApiKeyAuthenticator, credentialHash } from '../domain/auth/api-keys.js';
import { createTokenVerifier, TokenRejected, type TokenVerifier } from '../domain/auth/jwt.js';
import { MembershipChecker } from '../domain/auth/memberships.js';
import { RevokedGrants } from '../domain/auth/revoked-grants.js';
import { allows, requiredScope, type Caller, type Principal } from '../domain/auth/principal.js';
import type { GatewayConfig } from '../config.js';
import { HttpError } from './errors.js';
import { enforce, ipKey, tooManyRequests, type RateLimits } from './rate-limit.js';
import { prependOnRequest } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set on routes that declare `config.auth`, an error to read elsewhere. */
    readonly principal: Principal;
    /** Backing field of `principal` (null until authenticated). */
    authenticatedPrincipal: Principal | null;
    /** The authenticated credential on a route that declares `config.auth: { credentialOnly: true }`. */
    readonly caller: Caller;
    /** Backing field of `caller`. */
    authenticatedCaller: Caller | null;
  }
  interface FastifyContextConfig {
    /**
     * Who may call the route, applied by this plugin's onRoute hook:
     * - `true`: an API key, or a Bearer token with X-Workspace-Id whose scope allows the method;
     * - `{ apiKeyOnly: message }`: an API key only (a Bearer token gets 403 `message`);
     * - `{ credentialOnly: true }`: an API key, or a valid Bearer token of any scope WITHOUT a
     *   workspace (no X-Workspace-Id, no membership check, no method/scope check): the route
     *   (the MCP endpoint) reads `request.caller` and names the workspace per call itself;
     * - omitted or `false`: anyone, no credentials (probes, documentation, capability URLs).
     * An authenticated route's requests are rate-limited per credential (per client IP while
     * unauthenticated), and its failed credential checks count against the client IP's
     * failed-authentication budget (AUTH_FAILURES_PER_MINUTE).
     */
    auth?: boolean | { apiKeyOnly: string } | { credentialOnly: true };
  }
}

/** Revoked OAuth grants a replica keeps (each ~100 bytes); past it, each token's grant is checked with the tasks service. */
const maxRevokedGrants = 100_000;

export interface AuthOptions {
  config: GatewayConfig;
}

/** Where a client discovers the authorization server (RFC 9728), named in every 401 challenge. */
export const protectedResourceMetadataPath = '/.well-known/oauth-protected-resource';

function singleHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const bearerPattern = /^Bearer +([A-Za-z0-9\-_.~+/]+=*) *$/i;

/**
 * Authentication of the public API (contract section 5), on every route that declares
 * `config.auth` (see FastifyContextConfig above), whatever its URL:
 * - `X-API-Key` → tasks.AuthenticateApiKey (cached by the key's SHA-256 for AUTH_API_KEY_CACHE_TTL_MS);
 *   full read/write access to the key's workspace. If both headers are sent, the API key is used.
 *   Key and membership caches are evicted by pushed revocations (plugins/revocations.ts) and bypassed
 *   while the revocation stream is not ready, so a revoked key or membership fails on the next request.
 * - `Authorization: Bearer <jwt>` + `X-Workspace-Id` → signature, `iss`, `aud`, `exp`/`nbf`, `sub`
 *   checked by jose; then membership of `sub` in the workspace (cached briefly). A missing
 *   X-Workspace-Id is a malformed request: 400. Not a member: 403. `scope` is space-delimited,
 *   `write` implies `read`; a token without `write` may only GET/HEAD (403 otherwise).
 * - Nothing, a bad key or a bad token → 401. Bearer tokens are refused (401) when no key source
 *   (AUTH_JWT_JWKS_URL / AUTH_JWT_PUBLIC_KEY) is configured.
 * Failed key/token checks are counted per client IP (AUTH_FAILURES_PER_MINUTE); over the limit the
 * IP gets 429 for every credential that is not already known valid. Each lookup reserves its token
 * before it starts, so concurrency cannot exceed the limit either. Once authenticated, each request
 * takes a token from the caller's bucket (API key hash, or user + workspace). Must be registered
 * before the routes it protects (an onRoute hook sees only the routes added after it).
 */
async function authPlugin(app: FastifyInstance, options: AuthOptions): Promise<void> {
  const { config } = options;
  // RFC 9728 §5.1: a 401 names the protected-resource metadata, so a client (an MCP client) can find
  // the authorization server from the challenge alone.
  const realm = `Bearer realm="task-workspace-api", resource_metadata="${config.PUBLIC_BASE_URL}${protectedResourceMetadataPath}"`;
  const unauthorized = (message: string, tokenError = false): HttpError =>
    new HttpError(401, message, { 'www-authenticate': tokenError ? `${realm}, error="invalid_token"` : realm });
  const tasks = app.tasksApi;
  const apiKeys = new ApiKeyAuthenticator(tasks, config.AUTH_API_KEY_CACHE_TTL_MS);
  const memberships = new MembershipChecker(tasks, config.AUTH_MEMBERSHIP_CACHE_TTL_MS);
  // Grants revoked at the app's authorization server (only its tokens name one): pushed, loaded at
  // every (re)subscription, asked for one by one while the local set is not complete.
  const revokedGrants = config.AUTH_APP_ISSUER_URL
    ? new RevokedGrants(
        async (request) => {
          const listed = await app.revocationsApi.ListRevokedGrants(request);
          return { grants: listed.grants.map((grant) => ({ grantId: grant.grantId, expiresAtMs: Number(grant.expiresAtMs) })), truncated: listed.truncated };
        },
        { maxEntries: maxRevokedGrants, onError: (error) => app.log.warn({ err: error }, 'could not load the revoked grants (each token is checked with the tasks service)') },
      )
    : undefined;
  // Pushed revocations evict exactly what they name; while they may not arrive, no cache is trusted.
  app.revocationFeed.subscribe({
    onRevocation(revocation) {
      switch (revocation.kind) {
        case 'grant':
          revokedGrants?.add(revocation.grantId, revocation.expiresAtMs);
          return;
        case 'apiKey':
          apiKeys.revokeKey(revocation.apiKeyId);
          return;
        case 'membership':
          memberships.revoke(revocation.workspaceId, revocation.userId);
          apiKeys.revokeMember(revocation.workspaceId, revocation.userId);
          return;
        default:
          apiKeys.cache.clear();
          memberships.cache.clear();
      }
    },
    onTrustChange(trusted) {
      apiKeys.cache.setTrusted(trusted);
      memberships.cache.setTrusted(trusted);
      revokedGrants?.setTrusted(trusted);
    },
  });
  const verifier: TokenVerifier | undefined = await createTokenVerifier(config);
  const limits: RateLimits = app.rateLimits;

  app.decorateRequest('authenticatedPrincipal', null);
  app.decorateRequest('principal', {
    getter(this: FastifyRequest): Principal {
      if (this.authenticatedPrincipal === null) throw new Error('request.principal read on a route without authentication');
      return this.authenticatedPrincipal;
    },
  });
  app.decorateRequest('authenticatedCaller', null);
  app.decorateRequest('caller', {
    getter(this: FastifyRequest): Caller {
      if (this.authenticatedCaller === null) throw new Error('request.caller read on a route without credentialOnly authentication');
      return this.authenticatedCaller;
    },
  });

  /** 429 when this IP already failed too often; checked before any credential check. */
  function guardFailures(request: FastifyRequest): void {
    const wait = limits.authFailures.waitSeconds(ipKey(request));
    if (wait > 0) throw tooManyRequests(wait, 'too many failed authentication attempts, retry later');
  }

  /**
   * One request's claim on its IP's failed-authentication budget. A check that calls out (an API key
   * lookup in the tasks service, a token not verified recently) first reserves a token, so
   * concurrent checks can never outnumber the budget (checking the bucket before and charging it
   * after let 1,000 concurrent guesses through); a success, or a backend failure, gives the token
   * back. A request that joined a lookup of the same credential already in flight reserved
   * nothing, and pays one token if the credential is refused.
   */
  function failureBudget(request: FastifyRequest): { reserve(): void; release(): void; charge(): void } {
    const key = ipKey(request);
    let reserved = false;
    return {
      reserve() {
        const wait = limits.authFailures.take(key);
        if (wait > 0) throw tooManyRequests(wait, 'too many failed authentication attempts, retry later');
        reserved = true;
      },
      release() {
        if (reserved) limits.authFailures.refund(key);
        reserved = false;
      },
      charge() {
        if (!reserved) limits.authFailures.take(key);
        reserved = false;
      },
    };
  }

  /** The credential alone: an API key's principal, or a verified Bearer token's user and scopes. */
  async function identifyCaller(request: FastifyRequest): Promise<{ caller: Caller; bucket: string }> {
    const apiKey = singleHeader(request, 'x-api-key');
    if (apiKey !== undefined) {
      const hash = credentialHash(apiKey);
      let principal: Principal | null | undefined = apiKeys.cached(hash);
      if (!principal) {
        guardFailures(request);
        const budget = failureBudget(request);
        try {
          principal = await apiKeys.authenticate(apiKey, hash, () => budget.reserve());
        } catch (error) {
          budget.release();
          throw error;
        }
        if (!principal) {
          budget.charge();
          throw unauthorized('invalid API key');
        }
        budget.release();
      }
      return { caller: principal, bucket: `k:${hash}` };
    }

    const authorization = singleHeader(request, 'authorization');
    if (authorization === undefined) {
      throw unauthorized('missing credentials: send X-API-Key, or Authorization: Bearer <token> with X-Workspace-Id');
    }
    const token = bearerPattern.exec(authorization)?.[1];
    if (token === undefined) throw unauthorized('Authorization header must be "Bearer <token>"');
    if (!verifier) throw unauthorized('Bearer tokens are not accepted by this server', true);
    let verified;
    const budget = failureBudget(request);
    try {
      verified = await verifier.verify(token, () => budget.reserve());
    } catch (error) {
      if (error instanceof TokenRejected && !error.unavailable) {
        budget.charge();
        throw unauthorized(error.message, true);
      }
      budget.release();
      if (error instanceof TokenRejected) {
        request.log.error({ err: error }, 'token signing keys unavailable');
        throw new HttpError(503, 'service temporarily unavailable');
      }
      throw error;
    }
    budget.release();
    if (verified.grantId !== undefined && revokedGrants) {
      let revoked;
      try {
        revoked = await revokedGrants.isRevoked(verified.grantId);
      } catch (error) {
        request.log.error({ err: error }, 'could not check the token\'s grant');
        throw new HttpError(503, 'service temporarily unavailable');
      }
      if (revoked) throw unauthorized('token has been revoked', true);
    }
    return { caller: { kind: 'user', userId: verified.userId, scopes: verified.scopes }, bucket: `u:${verified.userId}` };
  }

  /** The credential and, for a Bearer token, the workspace of X-Workspace-Id it must be a member of. */
  async function identify(request: FastifyRequest): Promise<{ principal: Principal; bucket: string }> {
    const { caller, bucket } = await identifyCaller(request);
    if (caller.kind === 'apiKey') return { principal: caller, bucket };
    const workspaceId = singleHeader(request, 'x-workspace-id')?.trim();
    if (!workspaceId) throw new HttpError(400, 'X-Workspace-Id header is required with a Bearer token');
    if (!(await memberships.isMember(workspaceId, caller.userId))) {
      throw new HttpError(403, 'not a member of this workspace');
    }
    return {
      principal: { workspaceId, kind: 'user', userId: caller.userId, scopes: caller.scopes },
      bucket: `u:${workspaceId}:${caller.userId}`,
    };
  }

  /** Unauthenticated requests are rate-limited by client IP. */
  function rateLimitUnauthenticated(request: FastifyRequest, error: unknown): void {
    if (error instanceof HttpError && error.statusCode === 401) enforce(request, limits.requests, ipKey(request));
  }

  /** `credentialOnly` routes: the credential is checked and rate-limited; the route checks each workspace itself. */
  async function authenticateCaller(request: FastifyRequest): Promise<void> {
    let identified;
    try {
      identified = await identifyCaller(request);
    } catch (error) {
      rateLimitUnauthenticated(request, error);
      throw error;
    }
    request.authenticatedCaller = identified.caller;
    enforce(request, limits.requests, identified.bucket);
  }

  /** Rate-limits and authorizes an identified request (the part of `authenticate` after the credential check). */
  function admit(request: FastifyRequest, { principal, bucket }: { principal: Principal; bucket: string }, apiKeyOnly: string | undefined): void {
    request.authenticatedPrincipal = principal;
    enforce(request, limits.requests, bucket);
    if (!allows(principal, request.method)) {
      const scope = requiredScope(request.method);
      throw new HttpError(403, `token scope does not allow this request: "${scope}" is required`, {
        'www-authenticate': `${realm}, error="insufficient_scope", scope="${scope}"`,
      });
    }
    if (apiKeyOnly !== undefined && principal.kind !== 'apiKey') throw new HttpError(403, apiKeyOnly);
  }

  // The audit actor (packages/common audit/actor.ts): the handler, and every backend call it makes,
  // runs on behalf of the authenticated credential. preHandler runs after preValidation, which entered
  // the request's scope again (request-id.ts): the actor is named in that scope, without entering one
  // more (call-scope.ts); outside one (an app without the request-id plugin) in a scope of its own.
  app.addHook('preHandler', (request, _reply, done) => {
    // Routes registered before this plugin (Swagger UI) have neither decoration: undefined, not null.
    const actor = actorOf(request.authenticatedPrincipal ?? request.authenticatedCaller ?? null);
    if (actor === undefined || bindActor(actor)) done();
    else runWithActor(actor, done);
  });
  /** Authenticates, rate-limits and authorizes a request to a route that declares `config.auth`. */
  async function authenticate(request: FastifyRequest, apiKeyOnly: string | undefined): Promise<void> {
    let identified;
    try {
      identified = await identify(request);
    } catch (error) {
      rateLimitUnauthenticated(request, error);
      throw error;
    }
    admit(request, identified, apiKeyOnly);
  }

  /**
   * The same hook without a promise when it can: an API key whose principal is cached (the common
   * case) is admitted synchronously, exactly as `authenticate` would admit it; anything else takes
   * `authenticate`.
   */
  function authenticateHook(apiKeyOnly: string | undefined): onRequestHookHandler {
    return (request, _reply, done) => {
      const apiKey = singleHeader(request, 'x-api-key');
      if (apiKey !== undefined) {
        const hash = credentialHash(apiKey);
        const principal = apiKeys.cached(hash);
        if (principal) {
          try {
            admit(request, { principal, bucket: `k:${hash}` }, apiKeyOnly);
          } catch (error) {
            done(error as Error);
            return;
          }
          done();
          return;
        }
      }
      authenticate(request, apiKeyOnly).then(() => done(), (error: unknown) => done(error as Error));
    };
  }

  // The policy is the route's own (`config.auth`), read once when the route is added.
  app.addHook('onRoute', (route) => {
    const policy = route.config?.auth;
    if (!policy) return;
    if (policy !== true && 'credentialOnly' in policy) {
      prependOnRequest(route, async (request) => authenticateCaller(request));
      return;
    }
    const apiKeyOnly = policy === true ? undefined : policy.apiKeyOnly;
    prependOnRequest(route, authenticateHook(apiKeyOnly));
  });
}

/** Who the audit trail names for a credential: the API key (id and name) or the person (id; the name is the web app's to know). */
export function actorOf(caller: Principal | Caller | null): AuditActor | undefined {
  if (caller === null) return undefined;
  return caller.kind === 'apiKey' ? { type: 'apiKey', id: caller.apiKeyId, name: caller.apiKeyName.slice(0, 200) } : { type: 'user', id: caller.userId, name: null };
}

export default fp(authPlugin, { name: 'auth', dependencies: ['errors', 'rate-limit', 'backends', 'revocations'] });
