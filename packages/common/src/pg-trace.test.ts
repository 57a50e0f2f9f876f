import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { AlwaysOnSampler, InMemorySpanExporter, ParentBasedSampler, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { instrumentPg } from './pg-trace.js';
import { startTraceSdk } from './tracing-sdk.js';

/** Statement spans (pg-trace.ts) against the stack's Postgres, through a pool of one connection. */
describe('Postgres statement spans (pg-trace.ts)', () => {
  const stack = inject('stack');
  const exporter = new InMemorySpanExporter();
  const processor = new SimpleSpanProcessor({ exporter });
  const originalQuery = pg.Client.prototype.query;
  let stopSdk: () => Promise<void>;
  let uninstall: () => void;
  let pool: pg.Pool;

  beforeAll(() => {
    stopSdk = startTraceSdk({ spanProcessors: [processor], sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }), unsampledParentsDecide: true });
    uninstall = instrumentPg(pg);
    pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 1 });
  });
  afterAll(async () => {
    await pool.end();
    uninstall();
    await stopSdk();
  });

  const traceOf = (id: string, sampled: boolean) =>
    trace.setSpanContext(ROOT_CONTEXT, { traceId: id.repeat(32), spanId: id.repeat(16), traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true });

  async function spansOf(id: string): Promise<ReadableSpan[]> {
    await processor.forceFlush();
    return exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === id.repeat(32));
  }

  it('a statement in a sampled trace: a CLIENT span named after it, with its text and database, never its values', async () => {
    await context.with(traceOf('a', true), async () => {
      await pool.query({ name: 'pg-trace-test', text: 'SELECT $1::text AS secret', values: ['do-not-record'] });
      const client = await pool.connect();
      try {
        await client.query('select 1');
      } finally {
        client.release();
      }
    });
    const spans = await spansOf('a');
    const database = new URL(stack.databaseUrl).pathname.slice(1);
    expect(spans.map((span) => span.name).sort()).toEqual([`pg.query:SELECT ${database}`, `pg.query:pg-trace-test ${database}`]);
    const named = spans.find((span) => span.name.startsWith('pg.query:pg-trace-test'))!;
    expect(named.kind).toBe(SpanKind.CLIENT);
    expect(named.parentSpanContext?.spanId).toBe('a'.repeat(16));
    expect(named.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'db.namespace': database, 'db.query.text': 'SELECT $1::text AS secret', 'server.address': '127.0.0.1' });
    expect(typeof named.attributes['server.port']).toBe('number');
    expect(JSON.stringify(spans.map((span) => span.attributes))).not.toContain('do-not-record');
  });

  it('outside a sampled trace (unsampled, or none): no span', async () => {
    const before = exporter.getFinishedSpans().length;
    await context.with(traceOf('b', false), () => pool.query('SELECT 1'));
    await pool.query('SELECT 1');
    await processor.forceFlush();
    expect(exporter.getFinishedSpans()).toHaveLength(before);
  });

  it('a failed statement: an error span with its SQLSTATE, and the caller still gets the failure', async () => {
    await expect(context.with(traceOf('c', true), () => pool.query('SELECT 1 / 0'))).rejects.toMatchObject({ code: '22012' });
    const [span] = await spansOf('c');
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes['error.type']).toBe('22012');
  });

  it('a caller waiting for the pool’s client runs its statement in its own trace, not in the releasing one’s', async () => {
    const held = await context.with(traceOf('d', true), () => pool.connect());
    // Both wait for the one connection; pg-pool hands it on from inside `release`, in d's context.
    const unsampled = context.with(traceOf('e', false), () => pool.query('SELECT 2'));
    const sampled = context.with(traceOf('f', true), () => pool.query('SELECT 3'));
    await context.with(traceOf('d', true), async () => {
      await held.query('SELECT 1');
      held.release();
    });
    await Promise.all([unsampled, sampled]);
    expect((await spansOf('d')).map((span) => span.attributes['db.query.text'])).toEqual(['SELECT 1']);
    expect(await spansOf('e')).toEqual([]);
    expect((await spansOf('f')).map((span) => span.attributes['db.query.text'])).toEqual(['SELECT 3']);
  });

  it('uninstalled, pg is as it was', () => {
    expect(pg.Client.prototype.query).not.toBe(originalQuery);
    expect(Object.hasOwn(pg.Pool.prototype, 'connect')).toBe(true);
    uninstall();
    expect(pg.Client.prototype.query).toBe(originalQuery);
    expect(Object.hasOwn(pg.Pool.prototype, 'connect')).toBe(false);
    uninstall = () => undefined;
  });
});
