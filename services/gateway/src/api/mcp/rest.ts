import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller } from '../../domain/auth/principal.js';

/** What a REST route answered: its status and its parsed JSON body (undefined for 204). */
export interface RestAnswer {
  status: number;
  body: unknown;
  /** Size of the JSON body as received. */
  bytes: number;
  /** The `cursor` of the next page a paged list names in its `Link: <…>; rel="next"` header. */
  nextCursor?: string;
}

/** A REST route refused the call (4xx/5xx): its status and its `{"error"}` message. */
export class RestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfter?: string,
  ) {
    super(message);
  }
}

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface RestCall {
  method: HttpMethod;
  /** Under /v1, e.g. `/tasks/<id>`; path segments already encoded. */
  path: string;
  body?: unknown;
}

/** Calls the public REST API as the MCP caller, in one workspace. */
export type Rest = (call: RestCall) => Promise<RestAnswer>;

/**
 * ONE CODE PATH: an MCP tool is the REST route it names, run through `app.inject` with the
 * caller's own credential headers (X-API-Key, or Authorization + X-Workspace-Id), request id and client IP. So
 * authentication, the membership check, the scope rule, the per-credential rate limit, validation,
 * the body limit, plan limits, attribution of comments and the events are exactly the REST API's:
 * nothing of them is copied here. The request never leaves the process (no socket, no TLS).
 */
export function restAs(app: FastifyInstance, request: FastifyRequest, caller: Caller, workspaceId: string | undefined): Rest {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (caller.kind === 'apiKey') {
    headers['x-api-key'] = headerOf(request, 'x-api-key');
  } else {
    headers.authorization = headerOf(request, 'authorization');
    // An empty id is sent as such: the REST route answers its own 400.
    headers['x-workspace-id'] = workspaceId ?? '';
  }
  const userAgent = request.headers['user-agent'];
  if (typeof userAgent === 'string') headers['user-agent'] = userAgent;
  // The tool's REST call is part of the MCP request: it runs, and is logged, under the same id.
  headers['x-request-id'] = request.id;
  return async ({ method, path, body }) => {
    const response = await app.inject({
      method,
      url: `/v1${path}`,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      remoteAddress: request.ip,
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const parsed: unknown = response.body === '' ? undefined : parseJson(response.body);
    if (response.statusCode >= 400) {
      const message =
        typeof parsed === 'object' && parsed !== null && 'error' in parsed && typeof parsed.error === 'string'
          ? parsed.error
          : `request failed (${response.statusCode})`;
      const retryAfter = response.headers['retry-after'];
      throw new RestError(response.statusCode, message, typeof retryAfter === 'string' ? retryAfter : undefined);
    }
    const nextCursor = nextCursorOf(response.headers.link);
    return { status: response.statusCode, body: parsed, bytes: response.rawPayload.length, ...(nextCursor === undefined ? {} : { nextCursor }) };
  };
}

/** The `cursor` query parameter of a `Link` header's rel="next" URL, if it names one. */
export function nextCursorOf(link: unknown): string | undefined {
  if (typeof link !== 'string' || link.length > 4096) return undefined;
  const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(link);
  if (!match) return undefined;
  try {
    return new URL(match[1]!, 'http://link.invalid').searchParams.get('cursor') ?? undefined;
  } catch {
    return undefined;
  }
}

function headerOf(request: FastifyRequest, name: string): string {
  const value = request.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
