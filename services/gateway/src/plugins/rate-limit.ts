import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { GatewayConfig } from '../config.js';
import { rateLimitHeaders } from '../domain/rate-limit/headers.js';
import { KeyedTokenBuckets, type RateLimitDecision } from '../domain/rate-limit/keyed-buckets.js';
import { HttpError } from './errors.js';
import { prependOnRequest } from './route-hooks.js';

export { KeyedTokenBuckets };

export interface RateLimits {
  /** Requests per credential (or per client IP when unauthenticated). */
  requests: KeyedTokenBuckets;
  /** Failed authentications per client IP (brute force of keys and tokens). */
  authFailures: KeyedTokenBuckets;
}

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: RateLimits;
  }
  interface FastifyRequest {
    /** The request's charge against `rateLimits.requests` (null: not charged), sent as RateLimit headers. */
    rateLimitDecision: RateLimitDecision | null;
  }
  interface FastifyContextConfig {
    /**
     * `false`: never limited (probes and scrapes). Otherwise a route is limited by the token bucket
     * of the caller's credential when it authenticates (`auth`, charged by plugins/auth.ts once the
     * caller is known), else of the client IP.
     */
    rateLimit?: false;
  }
}

export function tooManyRequests(retryAfterSeconds: number, message = 'rate limit exceeded, retry later'): HttpError {
  return new HttpError(429, message, { 'retry-after': String(retryAfterSeconds) });
}

/** Counts a request against a bucket (its answer then carries the RateLimit headers); throws the 429 when it is empty. */
export function enforce(request: FastifyRequest, buckets: KeyedTokenBuckets, key: string, message?: string): void {
  const decision = buckets.consume(key);
  if (!decision) return;
  request.rateLimitDecision = decision;
  if (!decision.allowed) throw tooManyRequests(decision.retryAfterSeconds, message);
}

export const ipKey = (request: FastifyRequest): string => `ip:${request.ip}`;

/**
 * Rate limiting (DESIGN: per-credential token bucket; 429 + Retry-After + {"error"}), by the policy
 * each route declares in `config.rateLimit` and `config.auth`, read when the route is added (so this
 * plugin must be registered before the routes). The auth hook charges the caller's credential once
 * it is known; every other route (docs, OpenAPI, capability URLs) and any request that matches no
 * route is charged to the client IP here. Behind an ingress set TRUST_PROXY so the IP is the client's.
 * Every answer to a charged request carries `RateLimit-Policy` and `RateLimit` (domain/rate-limit/headers.ts);
 * plugins/rate-limit-sync.ts shares the buckets with the other replicas.
 */
async function rateLimitPlugin(app: FastifyInstance, options: { config: GatewayConfig }): Promise<void> {
  const { config } = options;
  const limits: RateLimits = {
    requests: new KeyedTokenBuckets(config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST, { shared: config.RATE_LIMIT_SYNC_INTERVAL_MS > 0 }),
    authFailures: new KeyedTokenBuckets(config.AUTH_FAILURES_PER_MINUTE / 60, config.AUTH_FAILURES_PER_MINUTE),
  };
  app.decorate('rateLimits', limits);
  app.decorateRequest('rateLimitDecision', null);
  if (!limits.requests.enabled) return;
  const policy = limits.requests.policy;
  // Every answer to a charged request, 429 and other errors included (onSend runs for those too).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.rateLimitDecision) void reply.headers(rateLimitHeaders(policy, request.rateLimitDecision));
    done(null, payload);
  });
  const limitByClientIp = async (request: FastifyRequest): Promise<void> => enforce(request, limits.requests, ipKey(request));
  app.addHook('onRoute', (route) => {
    if (route.config?.rateLimit === false || route.config?.auth) return;
    prependOnRequest(route, limitByClientIp);
  });
  // Requests that match no route (404) have no route policy: limited by client IP.
  app.addHook('onRequest', async (request) => {
    if (request.is404) await limitByClientIp(request);
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['errors'] });
