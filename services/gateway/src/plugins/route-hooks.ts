import type { onRequestHookHandler, RouteOptions } from 'fastify';

/*
 * Adding hooks to a route from an onRoute hook (rate limits, auth, idempotency). Always into a new
 * array: fastify derives the HEAD route of a GET from the options as declared (sharing their arrays)
 * and runs the onRoute hooks for it too, so pushing into a declared array would add a hook twice.
 */

/** A route's hooks of one kind as a list: fastify takes none, one, or a list. */
export function hooksOf<Hook>(declared: Hook | Hook[] | undefined): Hook[] {
  return declared === undefined ? [] : Array.isArray(declared) ? declared : [declared];
}

/** Adds `hook` to a route's onRequest hooks, ahead of those it declares. */
export function prependOnRequest(route: RouteOptions, hook: onRequestHookHandler): void {
  route.onRequest = [hook, ...hooksOf(route.onRequest)];
}
