import * as grpc from '@grpc/grpc-js';
import { z } from 'zod';
import { currentScope, runInScope, type CallScope } from '../call-scope.js';
import { currentRequestId, requestIdFromMetadata } from '../request-id.js';

/**
 * Who a change is made by, for the audit trail (issue #19 item 3). The HTTP edges (the gateway for
 * credentials, the web app for signed-in people) establish it and every backend gRPC call made while
 * serving the request carries it as binary metadata `x-tws-actor-bin` (JSON), the way `x-request-id`
 * travels (request-id.ts): set by `actorInterceptor` (part of `grpcClientOptions`), read back by
 * `unary` (grpc-server.ts) into the call's context, where the audit writers find it. Backends trust
 * their callers for it as they do for the request id (only the edges reach the gRPC ports: the
 * chart's NetworkPolicy). A write with no actor (the admin CLI, workers) is recorded as `system`.
 */
export const actorMetadataKey = 'x-tws-actor-bin';

/** Longest encoded actor accepted from metadata: a bigger value is ignored, never parsed. */
const maxActorBytes = 1_024;

export const AuditActor = z.strictObject({
  type: z.enum(['apiKey', 'user', 'system']),
  /** The API key id or the user id (a UUID in practice); null for `system`. */
  id: z.string().min(1).max(64).nullable(),
  /** The API key's name or the person's name when known (names are at most 200 characters). */
  name: z.string().max(200).nullable(),
});
export type AuditActor = z.output<typeof AuditActor>;

export const systemActor: AuditActor = Object.freeze({ type: 'system', id: null, name: null });

/**
 * Runs `fn` (and everything it starts asynchronously) on behalf of `actor`, in the request around it.
 * The actor lives in the scope of the work it acts in (call-scope.ts), beside the request id. A
 * backend keeps the actor as it came (`encodedActor`) and decodes it on first use: most calls (reads)
 * write no audit row and never parse it; an edge encodes its actor once for all its calls.
 */
export function runWithActor<T>(actor: AuditActor, fn: () => T): T {
  return runInScope({ requestId: currentRequestId(), actor, encodedActor: undefined }, fn);
}

/**
 * Runs `fn` as a caller's own work, in one scope: as the request `requestId` (when undefined: the
 * request around it) and on behalf of the actor `encoded` names (metadata or a coalesced call's
 * item), decoded when first asked for; as `system` when it is absent, oversized or (found on
 * decoding) malformed, never as the actor around it.
 */
export function runAsCaller<T>(requestId: string | undefined, encoded: unknown, fn: () => T): T {
  return runInScope({ requestId: requestId ?? currentRequestId(), actor: undefined, encodedActor: isBoundedActor(encoded) ? encoded : undefined }, fn);
}

/** A non-empty binary value within `maxActorBytes`: worth decoding. */
function isBoundedActor(value: unknown): value is Buffer {
  return Buffer.isBuffer(value) && value.length > 0 && value.length <= maxActorBytes;
}

/** The scope's actor, decoded now if it came encoded (a malformed one is dropped: none). */
function actorOf(scope: CallScope): AuditActor | undefined {
  if (scope.actor === undefined && scope.encodedActor !== undefined) {
    scope.actor = actorFromBytes(scope.encodedActor);
    if (scope.actor === undefined) scope.encodedActor = undefined;
  }
  return scope.actor;
}

/** The scope's actor as it travels, encoded now if only the actor is known; undefined: none. */
function encodedOf(scope: CallScope | undefined): Buffer | undefined {
  if (scope === undefined) return undefined;
  if (scope.encodedActor === undefined && scope.actor !== undefined) scope.encodedActor = Buffer.from(JSON.stringify(scope.actor), 'utf8');
  return scope.encodedActor;
}

/**
 * Names the actor of the work this code runs for, in its own scope: an edge's request once it is
 * authenticated (the gateway), or once the handler knows who acts (the web app knows the person's
 * user id in a workspace only once it has looked the workspace up). False outside any scope.
 */
export function bindActor(actor: AuditActor): boolean {
  const scope = currentScope();
  if (scope === undefined) return false;
  scope.actor = actor;
  scope.encodedActor = undefined;
  return true;
}

/** The actor this code runs for: `system` when no edge named one (workers, the admin CLI). */
export function currentActor(): AuditActor {
  const scope = currentScope();
  return (scope === undefined ? undefined : actorOf(scope)) ?? systemActor;
}

/**
 * Runs a gRPC call's handler as its caller's work (see runAsCaller): the request id (x-request-id) and
 * the actor (x-tws-actor-bin) its metadata carries. A call that carries neither runs as it is (no
 * scope entered): a call handler starts outside any, so `currentActor()` is `system` there already.
 */
export function runAsMetadataCaller<T>(metadata: grpc.Metadata, fn: () => T): T {
  const requestId = requestIdFromMetadata(metadata);
  const [actor] = metadata.get(actorMetadataKey);
  return requestId === undefined && !isBoundedActor(actor) ? fn() : runAsCaller(requestId, actor, fn);
}

/**
 * The actor this code runs for, encoded as it travels (JSON); empty when no edge named one. One it
 * received is passed on as it came (the next service decodes it as this one would have).
 */
export function encodeCurrentActor(): Buffer {
  return encodedOf(currentScope()) ?? Buffer.alloc(0);
}

/** An encoded actor (metadata or a coalesced call's item), or undefined when absent, oversized or malformed. */
export function actorFromBytes(value: unknown): AuditActor | undefined {
  if (!isBoundedActor(value)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch {
    return undefined;
  }
  const actor = AuditActor.safeParse(parsed);
  return actor.success ? actor.data : undefined;
}

/** Client side: every call made while serving a request carries its actor (unless one is set). */
export function actorInterceptor(): grpc.Interceptor {
  return (options, nextCall) => {
    const encoded = encodedOf(currentScope());
    if (encoded === undefined) return new grpc.InterceptingCall(nextCall(options));
    const requester = new grpc.RequesterBuilder()
      .withStart((metadata, listener, next) => {
        if (metadata.get(actorMetadataKey).length === 0) metadata.set(actorMetadataKey, encoded);
        next(metadata, listener);
      })
      .build();
    return new grpc.InterceptingCall(nextCall(options), requester);
  };
}
