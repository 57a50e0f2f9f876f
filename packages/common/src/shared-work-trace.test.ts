import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { AlwaysOnSampler, InMemorySpanExporter, ParentBasedSampler, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MicroBatcher } from './concurrency.js';
import { KeyedBatcher } from './keyed-batcher.js';
import { startTraceSdk } from './tracing-sdk.js';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Work shared by several requests' traces (sharedWorkContext of trace-context.ts), in both batchers. */
describe('batched work in traces', () => {
  let stop: () => Promise<void>;
  beforeAll(() => {
    stop = startTraceSdk({ spanProcessors: [new SimpleSpanProcessor({ exporter: new InMemorySpanExporter() })], sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }) });
  });
  afterAll(() => stop());

  const traceOf = (id: string, sampled: boolean) =>
    trace.setSpanContext(ROOT_CONTEXT, { traceId: id.repeat(32), spanId: id.repeat(16), traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true });

  it('KeyedBatcher runs each call in the trace of its first sampled member, or in none; never in the drain loop’s first caller’s', async () => {
    const seen: Array<{ ids: string[]; traceId: string | undefined }> = [];
    const gates: Array<() => void> = [];
    const batcher = new KeyedBatcher<string, string>(
      (_key, ids) =>
        new Promise((resolve) => {
          seen.push({ ids, traceId: trace.getActiveSpan()?.spanContext().traceId });
          gates.push(() => resolve(ids));
        }),
    );
    // The loop's first call: an unsampled trace alone. Then a call with an unsampled and two sampled members.
    const first = context.with(traceOf('a', false), () => batcher.submit('k', 'a1'));
    const later = [
      context.with(traceOf('b', false), () => batcher.submit('k', 'b1')),
      context.with(traceOf('c', true), () => batcher.submit('k', 'c1')),
      context.with(traceOf('d', true), () => batcher.submit('k', 'd1')),
    ];
    gates.shift()!();
    await first;
    await settle();
    // A third call of unsampled members only, queued while the second runs.
    const last = context.with(traceOf('e', false), () => batcher.submit('k', 'e1'));
    gates.shift()!();
    await Promise.all(later);
    await settle();
    gates.shift()!();
    await last;
    expect(seen).toStrictEqual([
      { ids: ['a1'], traceId: undefined },
      { ids: ['b1', 'c1', 'd1'], traceId: 'c'.repeat(32) },
      { ids: ['e1'], traceId: undefined },
    ]);
  });

  it('MicroBatcher flushes in the trace of the first sampled item, or in none; not in the timer’s (the first adder’s)', async () => {
    const flushedIn: Array<string | undefined> = [];
    const batcher = new MicroBatcher<string, string>(
      (items) => {
        flushedIn.push(trace.getActiveSpan()?.spanContext().traceId);
        return Promise.resolve(items);
      },
      { maxItems: 10, maxDelayMs: 1 },
    );
    await Promise.all(['a', 'b', 'c'].map((id) => context.with(traceOf(id, id !== 'a'), () => batcher.add(id))));
    await Promise.all(['d', 'e'].map((id) => context.with(traceOf(id, false), () => batcher.add(id))));
    expect(flushedIn).toStrictEqual(['b'.repeat(32), undefined]);
  });
});
