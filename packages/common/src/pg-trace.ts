import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type pg from 'pg';
import { projectTracer, sampledTraceId } from './trace-context.js';

/**
 * Spans of Postgres statements, in place of @opentelemetry/instrumentation-pg: a CLIENT span per
 * statement run in a sampled trace (`pg.query:<statement name or SQL command> <database>`, with
 * `db.system.name`, `db.namespace`, `db.query.text` — parameterised, never the values —
 * `server.address`, `server.port`, and `error.type` with the SQLSTATE of a failure). The
 * instrumentation did its work for every statement of every request: a span started under an
 * unsampled parent, attributes, a bound callback, an operation-name parse and its own OTel metrics
 * (which nothing here exports); here a statement outside a sampled trace costs one look at the
 * active span. `tracing.ts` installs it once the SDK runs; without tracing `pg` is left as it is.
 *
 * A pool's waiting callers get a client in whatever async context released it: `Pool#connect`'s
 * callback (the one `pool.query` uses) is bound to its caller's context, so a statement is never in
 * another request's trace. Submittables (cursors, streams) pass through without a span.
 */

type Method = (this: unknown, ...args: unknown[]) => unknown;

interface Patched {
  prototype: Record<string, unknown>;
  name: string;
  original: Method;
  /** Whether the method was the prototype's own (else inherited, as pg's Pool has pg-pool's `connect`). */
  own: boolean;
}

/** `SELECT …` → `SELECT` (what the span is named after when the statement has no name). */
function operationOf(text: string | undefined): string {
  if (text === undefined) return 'query';
  const trimmed = text.trimStart();
  const end = trimmed.search(/[\s;(]/);
  return (end === -1 ? trimmed : trimmed.slice(0, end)).toUpperCase() || 'query';
}

function isSubmittable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { submit?: unknown }).submit === 'function';
}

/** What a span says of a client's connection (pg's Client sets these from its configuration). */
interface ClientLike {
  database?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
}

function startStatementSpan(client: ClientLike, statement: unknown): Span {
  const config = typeof statement === 'string' ? { text: statement } : (statement as { text?: unknown; name?: unknown } | undefined);
  const text = typeof config?.text === 'string' ? config.text : undefined;
  const name = typeof config?.name === 'string' && config.name !== '' ? config.name : operationOf(text);
  const span = projectTracer().startSpan(`pg.query:${name}${client.database ? ` ${client.database}` : ''}`, { kind: SpanKind.CLIENT });
  span.setAttributes({
    'db.system.name': 'postgresql',
    ...(client.database ? { 'db.namespace': client.database } : {}),
    ...(text === undefined ? {} : { 'db.query.text': text }),
    ...(client.host ? { 'server.address': client.host } : {}),
    ...(typeof client.port === 'number' ? { 'server.port': client.port } : {}),
  });
  return span;
}

function endStatementSpan(span: Span, error: unknown): void {
  if (error !== undefined && error !== null) {
    const code = (error as { code?: unknown }).code;
    span.setAttribute('error.type', typeof code === 'string' ? code : error instanceof Error ? error.name : 'error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  }
  span.end();
}

function tracedQuery(original: Method): Method {
  return function query(this: unknown, ...args: unknown[]): unknown {
    // Only a statement in a sampled trace gets a span.
    if (sampledTraceId() === undefined || isSubmittable(args[0])) return original.apply(this, args);
    const span = startStatementSpan(this as ClientLike, args[0]);
    const inSpan = trace.setSpan(context.active(), span);
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = function (this: unknown, error: unknown, ...rest: unknown[]): unknown {
        endStatementSpan(span, error);
        return (callback as Method).call(this, error, ...rest);
      };
      return context.with(inSpan, () => original.apply(this, args));
    }
    const result = context.with(inSpan, () => original.apply(this, args));
    if (result instanceof Promise) {
      result.then(
        () => endStatementSpan(span, undefined),
        (error: unknown) => endStatementSpan(span, error),
      );
    } else {
      endStatementSpan(span, undefined);
    }
    return result;
  };
}

function boundConnect(original: Method): Method {
  return function connect(this: unknown, ...args: unknown[]): unknown {
    const callback = args[0];
    if (typeof callback === 'function') args[0] = context.bind(context.active(), callback as Method);
    return original.apply(this, args);
  };
}

function patch(prototype: object, name: string, wrap: (original: Method) => Method): Patched {
  const methods = prototype as Record<string, unknown>;
  const original = methods[name] as Method;
  const own = Object.hasOwn(methods, name);
  methods[name] = wrap(original);
  return { prototype: methods, name, original, own };
}

/** Installs the statement spans on `pgModule` (`pg`'s exports); returns the uninstall. */
export function instrumentPg(pgModule: typeof pg): () => void {
  const patched = [patch(pgModule.Client.prototype, 'query', tracedQuery), patch(pgModule.Pool.prototype, 'connect', boundConnect)];
  return () => {
    for (const { prototype, name, original, own } of patched) {
      if (own) prototype[name] = original;
      else delete prototype[name];
    }
  };
}
