import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { randomUUID } from 'node:crypto';
import { findNul, isGrpcError, nulMessage, requestIdHeader } from '@tws/common';
import { status as GrpcStatus } from '@grpc/grpc-js';

/** An error whose message and status are meant for the API client. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * The statuses whose details are the backend's own message for the client (a DomainError). Any
 * other status, RESOURCE_EXHAUSTED included (grpc-js's "Received message larger than max", not a rate
 * limit: rate limits are the gateway's own 429 with Retry-After), is a 500 whose details are only logged.
 */
const httpStatusOfGrpc: Partial<Record<GrpcStatus, number>> = {
  [GrpcStatus.INVALID_ARGUMENT]: 400,
  [GrpcStatus.FAILED_PRECONDITION]: 400,
  [GrpcStatus.OUT_OF_RANGE]: 400,
  [GrpcStatus.NOT_FOUND]: 404,
  [GrpcStatus.ALREADY_EXISTS]: 409,
  // A request's condition on the current state no longer holds (a PATCH's If-Match).
  [GrpcStatus.ABORTED]: 412,
  [GrpcStatus.PERMISSION_DENIED]: 403,
  [GrpcStatus.UNAUTHENTICATED]: 401,
  [GrpcStatus.UNAVAILABLE]: 503,
  [GrpcStatus.DEADLINE_EXCEEDED]: 503,
};

function describeValidation(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return 'invalid request';
  const where = error.validationContext ?? 'body';
  const path = (first.instancePath || '').replace(/^\//, '').replace(/\//g, '.');
  const field = path || (first.params as { missingProperty?: string } | undefined)?.missingProperty;
  return field ? `${where}.${field}: ${first.message ?? 'is invalid'}` : `${where}: ${first.message ?? 'is invalid'}`;
}

/** In JSON text a NUL can only be written as an escape: bodies without one are not walked. */
const escapedNul = /\\u0000/i;

const unsupportedMediaType = (): HttpError => new HttpError(415, 'unsupported content type: send application/json');

/**
 * Request bodies are JSON only (415 otherwise), with fastify's prototype-poisoning-safe parser and
 * the configured body limit (413). No route takes a body on DELETE, so a DELETE body, whatever its
 * type, is read and ignored; an empty body with `content-type: application/json` is "no body"
 * (the route's schema then decides: POST/PATCH answer `body: Required`).
 */
function registerBodyParsers(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // Bytes that are not UTF-8 are refused rather than silently replaced with U+FFFD and stored.
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw: Buffer, done) => {
    if (request.method === 'DELETE' || raw.length === 0) {
      done(null, undefined);
      return;
    }
    let body: string;
    try {
      body = utf8.decode(raw);
    } catch {
      done(new HttpError(400, 'request body is not valid UTF-8'), undefined);
      return;
    }
    if (!escapedNul.test(body)) {
      parseJson(request, body, done);
      return;
    }
    parseJson(request, body, (error: Error | null, parsed?: unknown) => {
      const path = error === null ? findNul(parsed) : undefined;
      if (path !== undefined) done(new HttpError(400, `body${path}: ${nulMessage}`), undefined);
      else done(error, parsed);
    });
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, _body, done) => {
    if (request.method === 'DELETE') done(null, undefined);
    else done(unsupportedMediaType(), undefined);
  });
}

/**
 * One error shape for every failure: `{"error": "<message>"}` with the right status. Internal
 * details of 5xx are logged, never sent.
 */
async function errorsPlugin(app: FastifyInstance): Promise<void> {
  registerBodyParsers(app);
  // A query parameter holding U+0000 (percent-encoded in the URL) is refused like a body field.
  app.addHook('preValidation', (request, _reply, done) => {
    const path = request.url.includes('%00') ? findNul(request.query) : undefined;
    done(path === undefined ? undefined : new HttpError(400, `querystring${path}: ${nulMessage}`));
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    void reply.code(404).send({ error: `route ${request.method} ${request.url.split('?')[0]} not found` });
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpError) {
      return reply.code(error.statusCode).headers(error.headers).send({ error: error.message });
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      return reply.code(400).send({ error: describeValidation(error) });
    }
    const thrown: unknown = error;
    if (isGrpcError(thrown)) {
      const status = httpStatusOfGrpc[thrown.code];
      if (status && status < 500) return reply.code(status).send({ error: thrown.details });
      request.log.error({ err: thrown }, 'backend call failed');
      return reply.code(status ?? 500).send({ error: status === 503 ? 'service temporarily unavailable' : 'internal server error' });
    }
    if (isResponseSerializationError(error)) {
      request.log.error({ err: error, issues: error.cause.issues }, 'response did not match its schema');
      return reply.code(500).send({ error: 'internal server error' });
    }
    const statusCode = error.statusCode ?? 500;
    if (statusCode >= 500) {
      request.log.error({ err: error }, 'unhandled error');
      return reply.code(500).send({ error: 'internal server error' });
    }
    // Fastify's own client errors: malformed JSON, unsupported media type, body too large, …
    return reply.code(statusCode).send({ error: clientErrorMessage(error, statusCode) });
  });
}

/**
 * Messages of the client errors fastify raises itself. Its own messages can echo the URL (with a
 * download token in it) or a header, so every FST_* error gets a fixed message here or a generic
 * one from its status.
 */
const frameworkMessages: Record<string, string> = {
  FST_ERR_BAD_URL: 'malformed URL: invalid percent-encoding',
  FST_ERR_MAX_PARAM_LENGTH: 'URL path segment is too long',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: unsupportedMediaType().message,
  FST_ERR_CTP_BODY_TOO_LARGE: 'request body is too large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'request body is empty but content-type is application/json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'request body is not valid JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'request body is not valid JSON',
};

function clientErrorMessage(error: FastifyError, statusCode: number): string {
  const known = frameworkMessages[error.code];
  if (known) return known;
  return (STATUS_CODES[statusCode] ?? 'bad request').toLowerCase();
}

/**
 * fastify's `frameworkErrors`: errors raised before routing (a path parameter over
 * `maxParamLength` → 414, a bad percent-encoding → 400, a failing async constraint → 500), which
 * never reach the error handler. Same shape as every other error.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const statusCode = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (statusCode >= 500) request.log.error({ err: error }, 'framework error before routing');
  // Raised before the onRequest hooks (plugins/request-id.ts): the id is set here.
  void reply
    .code(statusCode)
    .header(requestIdHeader, request.id)
    .type('application/json; charset=utf-8')
    .send({ error: statusCode >= 500 ? 'internal server error' : clientErrorMessage(error, statusCode) });
}

/**
 * The HTTP server's `clientError`: a request node's parser refused (malformed request line or
 * header, headers over the size limit, a request that took too long to arrive). Answered on the raw
 * socket, which is then closed, with `{"error"}` instead of fastify's framework fields (and a new
 * request id: no request was parsed to take one from).
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let statusCode = 400;
  let message = 'malformed HTTP request';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') [statusCode, message] = [408, 'request timed out'];
  else if (error.code === 'HPE_HEADER_OVERFLOW') [statusCode, message] = [431, 'request headers are too large'];
  const body = JSON.stringify({ error: message });
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroySoon();
}

export default fp(errorsPlugin, { name: 'errors' });
