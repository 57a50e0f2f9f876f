import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { context } from '@opentelemetry/api';
import { currentScope, runInScope, type CallScope } from './call-scope.js';
import { lazyChildLoggerFactory } from './request-logger.js';
import { endHttpServerSpan, recordHttpServerError, startHttpServerSpan, withHttpServerContext, type HttpRequestLike } from './http-server-span.js';

/**
 * Request ids: the HTTP header a client may send and every response carries, the gRPC metadata key
 * and the Kafka header that carry it between services, and the log field that shows it (fastify's
 * request logger names it `reqId`; every other log line of a call gets the same field).
 */
export const requestIdHeader = 'x-request-id';
export const requestIdMetadataKey = 'x-request-id';
export const requestIdLogField = 'reqId';

/** Longest id accepted from a client (a UUID is 36, a W3C traceparent 55). */
export const maxRequestIdLength = 128;

/**
 * A sane id: 1–128 characters of `A–Z a–z 0–9 - _ . : / + = @`. Enough for UUIDs, ULIDs,
 * traceparents, base64 and `service:id` forms; nothing that could split a log line, a header or a
 * shell argument (no spaces, quotes, backslashes, control or non-ASCII characters).
 */
const saneRequestId = /^[A-Za-z0-9\-_.:/+=@]+$/;

export function isSaneRequestId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= maxRequestIdLength && saneRequestId.test(value);
}

/** The id of a request: the client's when it sent one sane `X-Request-Id`, otherwise a new UUID. */
export function requestIdOf(sent: string | string[] | undefined): string {
  return isSaneRequestId(sent) ? sent : randomUUID();
}

/** Runs `fn` (and everything it starts asynchronously) as part of the request `requestId`, on behalf of the actor around it. */
export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  const around = currentScope();
  return runInScope({ requestId, actor: around?.actor, encodedActor: around?.encodedActor }, fn);
}

/** The id of the request this code runs for, if any. */
export function currentRequestId(): string | undefined {
  return currentScope()?.requestId;
}

/** A sane id from gRPC metadata (a backend trusts its callers no more than the gateway trusts clients). */
export function requestIdFromMetadata(metadata: grpc.Metadata): string | undefined {
  const [value] = metadata.get(requestIdMetadataKey);
  return isSaneRequestId(value) ? value : undefined;
}

/**
 * The client side: every outgoing call made while serving a request carries its id as
 * `x-request-id` metadata (unless the caller set one). Part of `grpcClientOptions`.
 */
export function requestIdInterceptor(): grpc.Interceptor {
  return (options, nextCall) => {
    const requestId = currentRequestId();
    if (requestId === undefined) return new grpc.InterceptingCall(nextCall(options));
    const requester = new grpc.RequesterBuilder()
      .withStart((metadata, listener, next) => {
        if (metadata.get(requestIdMetadataKey).length === 0) metadata.set(requestIdMetadataKey, requestId);
        next(metadata, listener);
      })
      .build();
    return new grpc.InterceptingCall(nextCall(options), requester);
  };
}

/**
 * The request-id options of an HTTP edge's fastify instance: no header taken as it is
 * (`requestIdHeader: false`) and `genReqId` applies the rule above. The request logger binds it as
 * `reqId` (`requestIdLogField`, fastify's default label; a LogController's `requestIdLogLabel`),
 * made when the request first writes a line (request-logger.ts).
 */
export const fastifyRequestIdOptions = {
  requestIdHeader: false,
  genReqId: (request: { headers: Record<string, string | string[] | undefined> }): string => requestIdOf(request.headers[requestIdHeader]),
  childLoggerFactory: lazyChildLoggerFactory,
} as const;

type Done = () => void;

/** The request's scope (call-scope.ts), kept on the request so that a hook can tell whether it already runs in it. */
const kRequestScope = Symbol('tws.requestScope');

interface WithRequestScope {
  [kRequestScope]?: CallScope;
}

/** A request's own scope: its id, and no actor until the edge authenticates it (audit/actor.ts `bindActor`). */
function requestScope(requestId: string): CallScope {
  return { requestId, actor: undefined, encodedActor: undefined };
}

/**
 * The hooks of an HTTP edge's request-id plugin. `onRequest` answers with the id (every response,
 * errors included, carries it), starts the request's trace span (http-server-span.ts) and enters
 * the request's scope (call-scope.ts); `preValidation` enters it again when it runs outside it, because a body
 * arrives in the socket's async context, not the request's (the pattern of @fastify/request-context),
 * so the handler and its gRPC calls run in it. `onResponse` and `onRequestAbort` end the span;
 * `onError` records a failure on it.
 */
export const requestIdHooks = {
  onRequest(request: HttpRequestLike & { id: string }, reply: { header(name: string, value: string): unknown }, done: Done): void {
    reply.header(requestIdHeader, request.id);
    const scope = requestScope(request.id);
    (request as WithRequestScope)[kRequestScope] = scope;
    const traced = startHttpServerSpan(request);
    if (traced === undefined) runInScope(scope, done);
    else context.with(traced, () => runInScope(scope, done));
  },
  preValidation(request: { id: string }, _reply: unknown, done: Done): void {
    // A request without a body gets here inside onRequest's context (fastify goes on synchronously);
    // only one whose body arrived since is in the socket's.
    const scope = (request as WithRequestScope)[kRequestScope];
    if (scope !== undefined && currentScope() === scope) done();
    else withHttpServerContext(request, () => runInScope(scope ?? requestScope(request.id), done));
  },
  onResponse(request: object, reply: { statusCode: number }, done: Done): void {
    endHttpServerSpan(request, reply.statusCode);
    done();
  },
  onRequestAbort(request: object, done: Done): void {
    endHttpServerSpan(request, undefined);
    done();
  },
  onError(request: object, reply: { statusCode: number }, error: unknown, done: Done): void {
    if (reply.statusCode >= 500) recordHttpServerError(request, error);
    done();
  },
};
