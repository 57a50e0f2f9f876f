import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { AlwaysOnSampler, InMemorySpanExporter, ParentBasedSampler, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyedBatcher } from './keyed-batcher.js';
import { startTraceSdk } from './tracing-sdk.js';

interface Call {
  key: string;
  ids: string[];
  finish: (error?: Error) => void;
}

/** A batcher whose calls complete when the test says so; the outcomes count the items. */
function recordingBatcher(maxBatch?: number): { batcher: KeyedBatcher<string, number>; calls: Call[] } {
  const calls: Call[] = [];
  let next = 1;
  const run = (key: string, ids: string[]): Promise<number[]> =>
    new Promise((resolve, reject) => {
      calls.push({ key, ids, finish: (error) => (error ? reject(error) : resolve(ids.map(() => next++))) });
    });
  return { batcher: new KeyedBatcher(run, maxBatch), calls };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('KeyedBatcher', () => {
  it('sends a lone item at once and the ones that arrive meanwhile together in the next call', async () => {
    const { batcher, calls } = recordingBatcher();
    const first = batcher.submit('s1', 'a');
    expect(calls.map((call) => call.ids)).toStrictEqual([['a']]);
    const later = ['b', 'c', 'd'].map((id) => batcher.submit('s1', id));
    expect(calls).toHaveLength(1);

    calls[0]!.finish();
    expect(await first).toBe(1);
    await settle();
    expect(calls.map((call) => call.ids)).toStrictEqual([['a'], ['b', 'c', 'd']]);
    calls[1]!.finish();
    expect(await Promise.all(later)).toStrictEqual([2, 3, 4]);

    // Idle again: the next creation goes out at once.
    void batcher.submit('s1', 'e');
    expect(calls.map((call) => call.ids).at(-1)).toStrictEqual(['e']);
  });

  it('keeps keys apart and caps a call at maxBatch items', async () => {
    const { batcher, calls } = recordingBatcher(2);
    void batcher.submit('s1', 'a');
    void batcher.submit('s2', 'x');
    for (const id of ['b', 'c', 'd']) void batcher.submit('s1', id);
    expect(calls.map((call) => call.ids)).toStrictEqual([['a'], ['x']]);

    calls[0]!.finish();
    await settle();
    calls[2]!.finish();
    await settle();
    expect(calls.map((call) => [call.key, call.ids])).toStrictEqual([
      ['s1', ['a']],
      ['s2', ['x']],
      ['s1', ['b', 'c']],
      ['s1', ['d']],
    ]);
  });

  it('fails only the items of a failed call', async () => {
    const { batcher, calls } = recordingBatcher();
    const first = batcher.submit('s1', 'a');
    const second = batcher.submit('s1', 'b');
    calls[0]!.finish(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await settle();
    calls[1]!.finish();
    expect(await second).toBe(1);
  });
});

describe('KeyedBatcher in traces', () => {
  let stop: () => Promise<void>;
  beforeAll(() => {
    stop = startTraceSdk({ spanProcessors: [new SimpleSpanProcessor({ exporter: new InMemorySpanExporter() })], sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }) });
  });
  afterAll(() => stop());

  const traceOf = (id: string, sampled: boolean) =>
    trace.setSpanContext(ROOT_CONTEXT, { traceId: id.repeat(32), spanId: id.repeat(16), traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true });

  it('runs each call in the trace of its first sampled member, or in none; never in the drain loop’s first caller’s', async () => {
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
});
