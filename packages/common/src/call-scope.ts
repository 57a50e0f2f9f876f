import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuditActor } from './audit/actor.js';

/**
 * What one unit of work carries on its async path: an HTTP request at an edge, a gRPC call, an item
 * of a coalesced call, an event. That is its request id (request-id.ts) and its audit actor
 * (audit/actor.ts). Both are in one AsyncLocalStorage: since Node 24 every `run` copies the async
 * context frame (a Map of every store), so entering both costs one copy, not two. Every request and
 * every backend call used to pay for the second one.
 *
 * A scope belongs to its unit of work: an edge's request, a call or an item gets its own. So an edge
 * that learns who acts only once it has authenticated the request names the actor in the request's
 * scope (`bindActor`) instead of entering one more.
 */
export interface CallScope {
  readonly requestId: string | undefined;
  /** The actor, once known: set by an edge, or decoded from `encodedActor`. */
  actor: AuditActor | undefined;
  /** The actor's JSON as it travels: as received and not yet decoded, or once encoded. */
  encodedActor: Buffer | undefined;
}

const scopes = new AsyncLocalStorage<CallScope>();

/** The scope of the work this code runs for, if any. */
export function currentScope(): CallScope | undefined {
  return scopes.getStore();
}

/** Runs `fn` (and everything it starts asynchronously) in `scope`. */
export function runInScope<T>(scope: CallScope, fn: () => T): T {
  return scopes.run(scope, fn);
}
