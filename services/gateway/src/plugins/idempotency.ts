import { createHash, type Hash } from 'node:crypto';
import { pipeline, Transform, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import {
  credentialOf,
  fingerprintOf,
  invalidKeyMessage,
  isStoredStatus,
  maxStoredBodyBytes,
  parseIdempotencyKey,
} from '../domain/idempotency.js';
import { HttpError } from './errors.js';
import { hooksOf } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `false`: this POST ignores Idempotency-Key. Otherwise every authenticated POST route takes it
     * (plugins/idempotency.ts): the first answer is stored and replayed for a retry.
     */
    idempotency?: false;
  }
  interface FastifyRequest {
    /** SHA-256 of the raw body as it streamed in (only with an Idempotency-Key). */
    idempotencyBodyHash: Hash | null;
    /** The claim this request holds on its key, to Complete or Release when it answers. */
    idempotencyClaim: { workspaceId: string; key: string; claimToken: string } | null;
  }
}

/** Header naming a replayed answer (as Stripe's `Idempotent-Replayed`). */
export const replayedHeader = 'idempotent-replayed';
const keyHeader = 'idempotency-key';

/** Wraps the body stream: the bytes pass on unchanged, and are hashed on the way (no copy kept). */
function hashingStream(payload: Readable, hash: Hash): Readable {
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  // An aborted or failed upload fails the wrapper too (fastify listens to the stream it is given).
  pipeline(payload, tee, () => undefined);
  return tee;
}

/**
 * Idempotency-Key on every authenticated POST route (issue #18 item 1; docs/api.md "Idempotency-Key").
 * Nothing runs for a request without the header but one header lookup per hook. With it:
 * - preParsing: the key's form (400), and the raw body hashed as it streams in;
 * - preHandler (after authentication and validation): tasks.v1.IdempotencyService Begin with the
 *   request's fingerprint → run (a claim is held), replay the stored answer (same status, body and
 *   content type, `Idempotent-Replayed: true`), 422 (the key was used for another request), or 409 +
 *   `Retry-After: 1` (the key's first request is still running);
 * - onSend: the answer is stored (Complete) when its status is one that is (domain/idempotency.ts) and
 *   its body is at most 64 KiB, else the claim is released (Release) so a retry runs again.
 * The store is the tasks service's Postgres (the gateway keeps nothing); if it cannot be reached the
 * request fails (503) rather than run unprotected. Must be registered before the routes.
 */
async function idempotencyPlugin(app: FastifyInstance): Promise<void> {
  const store = app.idempotencyApi;
  app.decorateRequest('idempotencyBodyHash', null);
  app.decorateRequest('idempotencyClaim', null);

  async function hashBody(request: FastifyRequest, _reply: FastifyReply, payload: Readable): Promise<Readable> {
    const header = request.headers[keyHeader];
    if (header === undefined) return payload;
    if (parseIdempotencyKey(header) === undefined) throw new HttpError(400, invalidKeyMessage);
    const hash = createHash('sha256');
    request.idempotencyBodyHash = hash;
    return hashingStream(payload, hash);
  }

  async function begin(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const header = request.headers[keyHeader];
    if (header === undefined) return undefined;
    const key = parseIdempotencyKey(header);
    if (key === undefined) throw new HttpError(400, invalidKeyMessage);
    const { principal } = request;
    const queryAt = request.url.indexOf('?');
    const fingerprint = fingerprintOf({
      method: request.method,
      route: request.routeOptions.url ?? request.url,
      params: request.params as Record<string, string>,
      query: queryAt === -1 ? '' : request.url.slice(queryAt + 1),
      credential: credentialOf(principal),
      bodyDigest: (request.idempotencyBodyHash ?? createHash('sha256')).digest(),
    });
    const begun = await store.BeginIdempotentRequest({ workspaceId: principal.workspaceId, key, fingerprint });
    switch (begun.outcome) {
      case 'IDEMPOTENCY_OUTCOME_PROCEED':
        request.idempotencyClaim = { workspaceId: principal.workspaceId, key, claimToken: begun.claimToken };
        return undefined;
      case 'IDEMPOTENCY_OUTCOME_REPLAY': {
        const stored = begun.response;
        if (!stored) throw new Error('BeginIdempotentRequest replayed without a response');
        return reply
          .code(stored.statusCode)
          .header('content-type', stored.contentType || 'application/json; charset=utf-8')
          .header(replayedHeader, 'true')
          .send(stored.body);
      }
      case 'IDEMPOTENCY_OUTCOME_MISMATCH':
        throw new HttpError(422, 'Idempotency-Key was already used for a different request (method, path, credential or body): use a new key');
      case 'IDEMPOTENCY_OUTCOME_IN_PROGRESS':
        throw new HttpError(409, 'a request with this Idempotency-Key is still being processed: retry later', { 'retry-after': '1' });
      default:
        throw new Error(`BeginIdempotentRequest answered ${begun.outcome}`);
    }
  }

  async function finish(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const claim = request.idempotencyClaim;
    if (claim === null) return payload;
    request.idempotencyClaim = null;
    const body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : undefined;
    const status = reply.statusCode;
    try {
      if (isStoredStatus(status) && body !== undefined && body.length <= maxStoredBodyBytes) {
        const contentType = reply.getHeader('content-type');
        const { stored } = await store.CompleteIdempotentRequest({
          ...claim,
          response: { statusCode: status, contentType: typeof contentType === 'string' ? contentType : '', body },
        });
        if (!stored) request.log.warn({ status }, 'idempotency claim was lost before the answer could be stored');
      } else {
        if (body !== undefined && body.length > maxStoredBodyBytes) request.log.warn({ status, bytes: body.length }, 'answer too large to store for Idempotency-Key replay');
        await store.ReleaseIdempotentRequest(claim);
      }
    } catch (error) {
      // The answer is sent anyway; the claim stays until IDEMPOTENCY_LOCK_TIMEOUT_MS (retries get 409 until then).
      request.log.warn({ err: error, status }, 'could not record the answer of an Idempotency-Key request');
    }
    return payload;
  }

  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const auth = route.config?.auth;
    if (!methods.includes('POST') || !auth || route.config?.idempotency === false) return;
    if (auth !== true && 'credentialOnly' in auth) return; // /mcp: JSON-RPC, each call names its own workspace
    route.preParsing = [...hooksOf(route.preParsing), hashBody];
    route.preHandler = [...hooksOf(route.preHandler), begin];
    route.onSend = [...hooksOf(route.onSend), finish];
  });
}

export default fp(idempotencyPlugin, { name: 'idempotency', dependencies: ['errors', 'backends', 'auth'] });
