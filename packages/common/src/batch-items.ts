import type { Logger } from 'pino';
import { context } from '@opentelemetry/api';
import { encodeCurrentActor, runAsCaller } from './audit/actor.js';
import { failureStatus } from './grpc-server.js';
import { currentRequestId, isSaneRequestId } from './request-id.js';
import { activeTraceIds, contextOfTraceparent, currentTraceparent, isSaneTraceparent } from './trace-context.js';

/**
 * Coalesced calls (a gateway sends several concurrent requests' writes in one RPC): each item names
 * the request it serves, and the server serves each item as that request's own call would be.
 */
export interface BatchItemOrigin {
  requestId: string;
  traceparent: string;
  /** The request's audit actor, encoded as `x-tws-actor-bin` (audit/actor.ts); empty: none. */
  actor: Buffer;
}

/** The outcome of one item: its answer, or the status its own call would have failed with. */
export type BatchItemOutcome<T> = { ok: T } | { error: { code: number; details: string } };

/** The client side: the request and trace this code runs for, to send with an item. */
export function currentBatchItemOrigin(): BatchItemOrigin {
  return { requestId: currentRequestId() ?? '', traceparent: currentTraceparent() ?? '', actor: encodeCurrentActor() };
}

/**
 * Runs `fn` as the item's own request: its request id and its audit actor (an item without one is
 * `system`, never the actor of the request that opened the coalesced call).
 */
export function runAsItemOrigin<T>(origin: Partial<BatchItemOrigin> | null | undefined, fn: () => T): T {
  const requestId = origin?.requestId;
  return runAsCaller(isSaneRequestId(requestId) ? requestId : undefined, origin?.actor, fn);
}

/**
 * The server side: runs `serve` as the item's own call — in its request id (log lines, the event's
 * request id), as its audit actor and, when it belongs to another trace than the coalesced call's, in its own trace
 * context (so its event continues the trace of the request that made it) — and turns a failure
 * into the status that call would have answered (logged as `unary` logs it).
 */
export async function serveBatchItem<T>(
  origin: Partial<BatchItemOrigin> | null | undefined,
  method: string,
  logger: Logger,
  serve: () => Promise<T>,
): Promise<BatchItemOutcome<T>> {
  const run = async (): Promise<BatchItemOutcome<T>> => {
    try {
      return { ok: await serve() };
    } catch (error) {
      return { error: failureStatus(error, logger, method) };
    }
  };
  const inTrace = (): Promise<BatchItemOutcome<T>> => {
    const traceparent = origin?.traceparent;
    if (!isSaneTraceparent(traceparent) || traceparent.slice(3, 35) === activeTraceIds()?.traceId) return run();
    return context.with(contextOfTraceparent(traceparent), run);
  };
  return runAsItemOrigin(origin, inTrace);
}
