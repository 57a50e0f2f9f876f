import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { projectTracer, tracingStarted } from './trace-context.js';

/**
 * The SERVER span of an HTTP edge's request (gateway, web), made by fastify hooks rather than by
 * instrumentation-http's patch of `http.Server#emit` (tracing.ts turns its incoming side off). The
 * instrumentation builds a dozen attributes, extracts the context and binds the request's and
 * response's event emitters for every request before the sampler decides; with the default 10 %
 * sampling that was ~8 % of the gateway's CPU on requests whose span is never exported. Here the
 * sampler decides on the span's name (method and route), the attributes are set only on a sampled
 * (recording) span, and no emitter is bound: the hooks enter the context themselves where fastify
 * changes async context (request-id.ts).
 *
 * Attributes follow the stable HTTP semantic conventions. The query string is never recorded (the
 * attachment capability URL carries its token there), nor any header but the user agent. Probes
 * and scrapes get no span.
 */

/** What the hooks read of a fastify request (structural: @tws/common does not depend on fastify). */
export interface HttpRequestLike {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  ip?: string | undefined;
  protocol?: string | undefined;
  hostname?: string | undefined;
  routeOptions?: { url?: string | undefined } | undefined;
  raw?: { httpVersion?: string | undefined } | undefined;
}

const kSpan = Symbol('tws.httpServerSpan');
const kContext = Symbol('tws.httpServerContext');

interface Traced {
  [kSpan]?: Span;
  [kContext]?: Context;
}

/** Probes and scrapes are not traced (they would be most of the traces). */
const untracedRoutes = new Set(['/healthz', '/readyz', '/livez', '/metrics']);

/**
 * Starts the request's SERVER span (child of the caller's `traceparent`, if any) and returns the
 * context to run the request in; undefined without the SDK (nothing is done or kept per request).
 */
export function startHttpServerSpan(request: HttpRequestLike): Context | undefined {
  if (!tracingStarted()) return undefined;
  const route = request.routeOptions?.url;
  if (route !== undefined && untracedRoutes.has(route)) return undefined;
  // The propagators tracing-sdk.ts installs (W3C trace context and baggage) read these two headers
  // (tracestate only beside a traceparent): without either there is nothing to extract.
  const headers = request.headers;
  const parent = headers.traceparent === undefined && headers.baggage === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, headers);
  // No attributes at start: the SDK sanitizes those before it samples, and our samplers never read them.
  const span = projectTracer().startSpan(route === undefined ? request.method : `${request.method} ${route}`, { kind: SpanKind.SERVER }, parent);
  if (span.isRecording()) {
    const queryAt = request.url.indexOf('?');
    const userAgent = request.headers['user-agent'];
    span.setAttributes({
      'http.request.method': request.method,
      ...(route === undefined ? {} : { 'http.route': route }),
      'url.path': queryAt === -1 ? request.url : request.url.slice(0, queryAt),
      ...(request.protocol ? { 'url.scheme': request.protocol } : {}),
      ...(request.hostname ? { 'server.address': request.hostname } : {}),
      ...(request.ip ? { 'client.address': request.ip } : {}),
      ...(request.raw?.httpVersion ? { 'network.protocol.version': request.raw.httpVersion } : {}),
      ...(typeof userAgent === 'string' ? { 'user_agent.original': userAgent.slice(0, 256) } : {}),
    });
  }
  const active = trace.setSpan(parent, span);
  (request as Traced)[kSpan] = span;
  (request as Traced)[kContext] = active;
  return active;
}

/** The context `startHttpServerSpan` made for `request`, if any (hooks that run in another async context enter it again). */
export function httpServerContextOf(request: object): Context | undefined {
  return (request as Traced)[kContext];
}

/** Runs `fn` in the request's trace context (or as it is, without one). */
export function withHttpServerContext<T>(request: object, fn: () => T): T {
  const saved = (request as Traced)[kContext];
  return saved === undefined ? fn() : context.with(saved, fn);
}

/** Records an error the request ended with (a 5xx); the span ends in `endHttpServerSpan`. */
export function recordHttpServerError(request: object, error: unknown): void {
  const span = (request as Traced)[kSpan];
  if (span?.isRecording()) span.recordException(error instanceof Error ? error : String(error));
}

/** Ends the request's span with the response's status (`undefined`: the client went away first). */
export function endHttpServerSpan(request: object, statusCode: number | undefined): void {
  const traced = request as Traced;
  const span = traced[kSpan];
  if (span === undefined) return;
  traced[kSpan] = undefined;
  if (statusCode === undefined) {
    span.setAttribute('error.type', 'aborted');
  } else {
    span.setAttribute('http.response.status_code', statusCode);
    // Server spans: only 5xx is an error of the server's (4xx is the client's).
    if (statusCode >= 500) {
      span.setAttribute('error.type', String(statusCode));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}
