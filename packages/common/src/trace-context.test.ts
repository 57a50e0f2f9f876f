import { Writable } from 'node:stream';
import { context } from '@opentelemetry/api';
import { InMemorySpanExporter, ParentBasedSampler, SimpleSpanProcessor, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { runWithRequestId } from './request-id.js';
import { contextOfTraceparent, currentTraceparent, inSpan, isSaneTraceparent, projectTracer, SpanKind, startSpan, traceparentOf } from './trace-context.js';
import { startTraceSdk } from './tracing-sdk.js';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const parentId = '00f067aa0ba902b7';
const parent = `00-${traceId}-${parentId}-01`;

function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('test', 'info', sink), lines };
}

describe('traceparent values', () => {
  it('accepts W3C version 00 only, lower-case hex, with non-zero ids', () => {
    expect(isSaneTraceparent(parent)).toBe(true);
    expect(isSaneTraceparent(`00-${traceId}-${parentId}-00`)).toBe(true);
    for (const bad of [
      `01-${traceId}-${parentId}-01`,
      `00-${traceId.toUpperCase()}-${parentId}-01`,
      `00-${'0'.repeat(32)}-${parentId}-01`,
      `00-${traceId}-${'0'.repeat(16)}-01`,
      `00-${traceId}-${parentId}-01-extra`,
      `${parent} `,
      '',
      'x'.repeat(10_000),
      42,
      null,
    ]) {
      expect(isSaneTraceparent(bad), String(bad)).toBe(false);
    }
    expect(contextOfTraceparent('not a traceparent')).toBe(contextOfTraceparent(undefined));
  });
});

describe('with tracing off (no SDK)', () => {
  it('has no active trace, runs spans as plain calls and passes a stored traceparent through unchanged', async () => {
    expect(currentTraceparent()).toBeNull();
    await expect(inSpan('work', {}, async () => currentTraceparent())).resolves.toBeNull();
    // The outbox relay relies on this: no SDK, so the record carries the change's own context.
    expect(traceparentOf(startSpan('publish', { kind: SpanKind.PRODUCER, parent: contextOfTraceparent(parent) }))).toBe(parent);
    const { logger, lines } = capturingLogger();
    runWithRequestId('req-1', () => logger.info('plain'));
    expect(lines[0]).toMatchObject({ reqId: 'req-1' });
    expect(lines[0]).not.toHaveProperty('traceId');
  });
});

describe('with tracing on', () => {
  const exporter = new InMemorySpanExporter();
  // Its export is asynchronous: forceFlush before reading the exporter.
  const processor = new SimpleSpanProcessor({ exporter });
  let shutdown: () => Promise<void>;
  beforeAll(() => {
    shutdown = startTraceSdk({ spanProcessors: [processor] });
  });
  afterAll(async () => {
    await shutdown();
  });

  it('continues a stored traceparent: child span, its context in traceparentOf, and trace and span ids on log lines', async () => {
    const { logger, lines } = capturingLogger();
    let inside: string | null = null;
    await inSpan('consume', { kind: SpanKind.CONSUMER, parent: contextOfTraceparent(parent), attributes: { attempt: 1 } }, async (span) => {
      inside = currentTraceparent();
      expect(traceparentOf(span)).toBe(inside);
      await new Promise((resolve) => setTimeout(resolve, 1));
      runWithRequestId('req-2', () => logger.info('inside'));
    });
    logger.info('outside');
    await processor.forceFlush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.spanContext().traceId).toBe(traceId);
    expect(span?.parentSpanContext?.spanId).toBe(parentId);
    expect(span?.kind).toBe(SpanKind.CONSUMER);
    expect(inside).toBe(`00-${traceId}-${span?.spanContext().spanId}-01`);
    expect(lines[0]).toMatchObject({ reqId: 'req-2', traceId, spanId: span?.spanContext().spanId });
    expect(lines[1]).not.toHaveProperty('traceId');
  });

  it('marks a span whose work rejects as an error and rethrows', async () => {
    exporter.reset();
    await expect(inSpan('fails', {}, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await processor.forceFlush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.status.code).toBe(2);
    expect(span?.events.map((event) => event.name)).toEqual(['exception']);
  });
});

describe('with tracing on, a child of an unsampled parent (parent-based sampling)', () => {
  const exporter = new InMemorySpanExporter();
  const processor = new SimpleSpanProcessor({ exporter });
  const unsampled = `00-${traceId}-${parentId}-00`;
  let shutdown: () => Promise<void>;
  beforeAll(() => {
    shutdown = startTraceSdk({
      spanProcessors: [processor],
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1) }),
      unsampledParentsDecide: true,
    });
  });
  afterAll(async () => {
    await shutdown();
  });

  it('runs in the parent’s own context: its ids on log lines and in traceparent, no span recorded, errors passed on', async () => {
    const { logger, lines } = capturingLogger();
    const parentContext = contextOfTraceparent(unsampled);
    const seen: Array<{ active: unknown; traceparent: string | null; nested: unknown }> = [];
    await inSpan('consume', { kind: SpanKind.CONSUMER, parent: parentContext }, async (span) => {
      expect(span.isRecording()).toBe(false);
      const active = context.active();
      const nested = await inSpan('attempt', { kind: SpanKind.CLIENT }, async () => context.active());
      seen.push({ active, traceparent: currentTraceparent(), nested });
      runWithRequestId('req-3', () => logger.info('inside'));
    });
    // No context of its own: the parent's (the one given, then the active one for the nested span).
    expect(seen).toEqual([{ active: parentContext, traceparent: unsampled, nested: parentContext }]);
    expect(seen[0]?.active).toBe(parentContext);
    expect(seen[0]?.nested).toBe(parentContext);
    expect(lines[0]).toMatchObject({ reqId: 'req-3', traceId, spanId: parentId });
    await expect(inSpan('fails', { parent: parentContext }, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      inSpan('throws', { parent: parentContext }, () => {
        throw new Error('at once');
      }),
    ).rejects.toThrow('at once');
    await processor.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('still gives a sampled parent’s child a span and a context of its own', async () => {
    exporter.reset();
    const parentContext = contextOfTraceparent(parent);
    let inside: unknown;
    await inSpan('consume', { kind: SpanKind.CONSUMER, parent: parentContext }, async () => {
      inside = context.active();
    });
    await processor.forceFlush();
    expect(inside).not.toBe(parentContext);
    expect(exporter.getFinishedSpans().map((span) => [span.name, span.parentSpanContext?.spanId])).toEqual([['consume', parentId]]);
  });
});

describe('the project tracer (looked up once per tracer provider)', () => {
  it('is the same tracer for every span, and the new SDK’s after a stop and a start (spans reach the new exporter)', async () => {
    const started = async (name: string) => {
      const exporter = new InMemorySpanExporter();
      const processor = new SimpleSpanProcessor({ exporter });
      const stop = startTraceSdk({ spanProcessors: [processor] });
      startSpan(name, {}).end();
      await processor.forceFlush();
      // Read before the stop: an in-memory exporter forgets its spans when shut down.
      return { names: exporter.getFinishedSpans().map((span) => span.name), tracer: projectTracer(), stop };
    };
    const first = await started('first');
    expect(projectTracer()).toBe(first.tracer);
    await first.stop();
    const second = await started('second');
    await second.stop();
    expect([first.names, second.names]).toEqual([['first'], ['second']]);
    expect(second.tracer).not.toBe(first.tracer);
  });
});
