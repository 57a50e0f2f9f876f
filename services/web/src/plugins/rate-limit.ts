import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { UserFacingError } from '../domain/errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The onRequest hook of the sign-in routes: attempts per client IP (a no-op when the limit is 0). */
    signInRateLimit: onRequestHookHandler;
    /** The onRequest hook of dynamic client registration (RFC 7591): registrations per client IP. */
    registrationRateLimit: onRequestHookHandler;
  }
}

/**
 * Sign-in attempts per client IP, with @fastify/rate-limit (fixed one-minute windows in this
 * process's memory, so per replica): enough to stop a script hammering the provider through us,
 * generous for a person. Only routes that add the `signInRateLimit` hook are limited (`global: false`;
 * a hook rather than `config.rateLimit`, which the gateway's typings declare differently).
 * Behind an ingress set TRUST_PROXY so the IP is the client's.
 */
async function rateLimitPlugin(app: FastifyInstance, options: { perMinute: number; registrationsPerMinute: number }): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return new UserFacingError(
        429,
        'Too many sign-in attempts',
        `Too many sign-in attempts came from your network. Wait ${seconds} second${seconds === 1 ? '' : 's'}, then try again.`,
      );
    },
  });
  const unlimited: onRequestHookHandler = async () => undefined;
  app.decorate('signInRateLimit', options.perMinute > 0 ? app.rateLimit({ max: options.perMinute, timeWindow: 60_000 }) : unlimited);
  app.decorate(
    'registrationRateLimit',
    options.registrationsPerMinute > 0
      ? app.rateLimit({
          max: options.registrationsPerMinute,
          timeWindow: 60_000,
          keyGenerator: (request) => `registration:${request.ip}`,
          errorResponseBuilder: (_request, context) => {
            const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
            return new UserFacingError(429, 'Too many registrations', `Too many client registrations came from your network. Wait ${seconds} seconds, then try again.`);
          },
        })
      : unlimited,
  );
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['errors'] });
