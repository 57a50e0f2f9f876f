import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { TokenBucket } from 'limiter';
import { LRUCache } from 'lru-cache';
import type { GatewayConfig } from '../config.js';
import { HttpError } from './errors.js';

/**
 * Token buckets by key (a credential hash, a user + workspace, a client IP), in this process's
 * memory: each gateway replica limits on its own. A bucket holds `burst` tokens and refills at
 * `perSecond`; a bucket untouched for as long as a full refill takes is dropped, which changes
 * nothing (it would be full again), and at most `maxKeys` buckets are kept.
 */
export class KeyedTokenBuckets {
  private readonly buckets: LRUCache<string, TokenBucket> | undefined;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    maxKeys = 100_000,
  ) {
    if (perSecond > 0 && burst > 0) {
      const fullRefillMs = Math.ceil((burst / perSecond) * 1000);
      this.buckets = new LRUCache<string, TokenBucket>({ max: maxKeys, ttl: Math.max(fullRefillMs, 1_000), updateAgeOnGet: true });
    }
  }

  get enabled(): boolean {
    return this.buckets !== undefined;
  }

  private bucket(key: string): TokenBucket {
    let bucket = this.buckets?.get(key);
    if (!bucket) {
      bucket = new TokenBucket({ bucketSize: this.burst, tokensPerInterval: this.perSecond, interval: 1000 });
      bucket.content = this.burst; // limiter's buckets start empty; a new client starts with its burst
      this.buckets?.set(key, bucket);
    }
    return bucket;
  }

  /** Takes one token: 0 when allowed, otherwise the whole seconds until a token is back (≥ 1). */
  take(key: string): number {
    if (!this.buckets) return 0;
    const bucket = this.bucket(key);
    if (bucket.tryRemoveTokens(1)) return 0;
    return Math.max(1, Math.ceil(bucket.getWaitTime(1) / 1000));
  }

  /** Gives back a token taken earlier (a reservation that turned out not to count), up to the burst. */
  refund(key: string): void {
    const bucket = this.buckets?.get(key);
    if (!bucket) return;
    bucket.drip();
    bucket.content = Math.min(this.burst, bucket.content + 1);
  }

  /** Without taking anything: 0 when a token is available, otherwise the seconds to wait. */
  waitSeconds(key: string): number {
    const bucket = this.buckets?.get(key);
    if (!bucket) return 0;
    const waitMs = bucket.getWaitTime(1);
    return waitMs === 0 ? 0 : Math.max(1, Math.ceil(waitMs / 1000));
  }
}

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

/** Counts a request against a bucket; throws the 429 when it is empty. */
export function enforce(buckets: KeyedTokenBuckets, key: string, message?: string): void {
  const retryAfter = buckets.take(key);
  if (retryAfter > 0) throw tooManyRequests(retryAfter, message);
}

export const ipKey = (request: FastifyRequest): string => `ip:${request.ip}`;

/**
 * Adds `hook` to a route's onRequest hooks, ahead of those it declares, from an onRoute hook. A new
 * array: fastify derives the HEAD route of a GET from the options as declared (sharing their arrays)
 * and runs the onRoute hooks for it too, so pushing into a declared array would add the hook twice.
 */
export function prependOnRequest(route: RouteOptions, hook: onRequestHookHandler): void {
  const declared = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
  route.onRequest = [hook, ...declared];
}

/**
 * Rate limiting (DESIGN: per-credential token bucket; 429 + Retry-After + {"error"}), by the policy
 * each route declares in `config.rateLimit` and `config.auth`, read when the route is added (so this
 * plugin must be registered before the routes). The auth hook charges the caller's credential once
 * it is known; every other route (docs, OpenAPI, capability URLs) and any request that matches no
 * route is charged to the client IP here. Behind an ingress set TRUST_PROXY so the IP is the client's.
 */
async function rateLimitPlugin(app: FastifyInstance, options: { config: GatewayConfig }): Promise<void> {
  const { config } = options;
  const limits: RateLimits = {
    requests: new KeyedTokenBuckets(config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST),
    authFailures: new KeyedTokenBuckets(config.AUTH_FAILURES_PER_MINUTE / 60, config.AUTH_FAILURES_PER_MINUTE),
  };
  app.decorate('rateLimits', limits);
  if (!limits.requests.enabled) return;
  const limitByClientIp = async (request: FastifyRequest): Promise<void> => enforce(limits.requests, ipKey(request));
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
