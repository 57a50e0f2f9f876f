import { AsyncLocalStorage } from 'node:async_hooks';
import * as grpc from '@grpc/grpc-js';
import { z } from 'zod';

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
 * The actor of one request; a slot, so an edge that learns who acts only inside its handler can fill
 * it in. A backend keeps the actor as it came (`encoded`) and decodes it on first use: most calls
 * (reads) write no audit row and never parse it; an edge encodes its actor once for all its calls.
 */
interface ActorSlot {
  /** The actor, once known: set by an edge, or decoded from `encoded`. */
  actor: AuditActor | undefined;
  /** Its JSON as it travels: as received and not yet decoded, or once encoded. */
  encoded: Buffer | undefined;
}

const actorContext = new AsyncLocalStorage<ActorSlot>();

/** Runs `fn` (and everything it starts asynchronously) on behalf of `actor`. */
export function runWithActor<T>(actor: AuditActor, fn: () => T): T {
  return actorContext.run({ actor, encoded: undefined }, fn);
}

/**
 * Runs `fn` on behalf of the actor `encoded` names (metadata or a coalesced call's item), decoded when
 * first asked for; as `system` when it is absent, oversized or (found on decoding) malformed.
 */
export function runWithEncodedActor<T>(encoded: unknown, fn: () => T): T {
  return actorContext.run({ actor: undefined, encoded: isBoundedActor(encoded) ? encoded : undefined }, fn);
}

/** A non-empty binary value within `maxActorBytes`: worth decoding. */
function isBoundedActor(value: unknown): value is Buffer {
  return Buffer.isBuffer(value) && value.length > 0 && value.length <= maxActorBytes;
}

/** The slot's actor, decoded now if it came encoded (a malformed one is dropped: none). */
function actorOf(slot: ActorSlot): AuditActor | undefined {
  if (slot.actor === undefined && slot.encoded !== undefined) {
    slot.actor = actorFromBytes(slot.encoded);
    if (slot.actor === undefined) slot.encoded = undefined;
  }
  return slot.actor;
}

/** The slot's actor as it travels, encoded now if only the actor is known; undefined: none. */
function encodedOf(slot: ActorSlot | undefined): Buffer | undefined {
  if (slot === undefined) return undefined;
  if (slot.encoded === undefined && slot.actor !== undefined) slot.encoded = Buffer.from(JSON.stringify(slot.actor), 'utf8');
  return slot.encoded;
}

/**
 * Runs `fn` with an empty actor slot that `bindActor` fills in later on the same request (the web
 * app knows the person's user id in a workspace only once its handler looked the workspace up).
 */
export function runWithActorSlot<T>(fn: () => T): T {
  return actorContext.run({ actor: undefined, encoded: undefined }, fn);
}

/** Names the actor of the request this code runs for (see runWithActorSlot); false outside one. */
export function bindActor(actor: AuditActor): boolean {
  const slot = actorContext.getStore();
  if (slot === undefined) return false;
  slot.actor = actor;
  slot.encoded = undefined;
  return true;
}

/** The actor this code runs for: `system` when no edge named one (workers, the admin CLI). */
export function currentActor(): AuditActor {
  const slot = actorContext.getStore();
  return (slot === undefined ? undefined : actorOf(slot)) ?? systemActor;
}

/**
 * Runs `fn` on behalf of the actor in a call's metadata (decoded when first asked for; see
 * runWithEncodedActor). A call that carries none runs as it is (no context entered): a call
 * handler starts outside any actor, so `currentActor()` is `system` there already.
 */
export function runWithMetadataActor<T>(metadata: grpc.Metadata, fn: () => T): T {
  const [value] = metadata.get(actorMetadataKey);
  return isBoundedActor(value) ? runWithEncodedActor(value, fn) : fn();
}

/**
 * The actor this code runs for, encoded as it travels (JSON); empty when no edge named one. One it
 * received is passed on as it came (the next service decodes it as this one would have).
 */
export function encodeCurrentActor(): Buffer {
  return encodedOf(actorContext.getStore()) ?? Buffer.alloc(0);
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
    const encoded = encodedOf(actorContext.getStore());
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
