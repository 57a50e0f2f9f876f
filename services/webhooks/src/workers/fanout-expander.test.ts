import { describe, expect, it } from 'vitest';
import { createLogger } from '@tws/common';
import type { DeliveryPipeline } from '../domain/delivery/pipeline.js';
import type { DeliveryWork } from '../store/delivery-work.js';
import { shardBounds, type FanOutBatch, type FanOutKey, type FanOutStore, type QueuedFanOut } from '../store/fanouts.js';
import { FanOutExpander } from './fanout-expander.js';

/** One fan-out of `endpoints` deliveries in shard 0, in memory; records every cursor move. */
function fakeStore(endpoints: number) {
  const ids = Array.from({ length: endpoints }, (_, index) => `0${index.toString().padStart(7, '0')}-0000-0000-0000-000000000000`);
  const fanOut: QueuedFanOut = {
    eventId: 'evt_1', workspaceId: 'w1', shard: 0, seq: '1', type: 'task.updated', taskId: 't1',
    payload: Buffer.from('{}'), afterEndpoint: null, requestId: null, traceparent: null,
  };
  const moves: string[] = [];
  let finished = false;
  let leased = false;
  const store = {
    free: async (): Promise<FanOutKey[]> => (finished || leased ? [] : [{ workspaceId: 'w1', shard: 0 }]),
    lease: async (_owner: string, keys: FanOutKey[]) => {
      leased = keys.length > 0;
      return keys;
    },
    release: async () => {
      leased = false;
    },
    next: async (_key: FanOutKey, afterSeq: string | null) => (finished || afterSeq !== null ? undefined : fanOut),
    expand: async (_fanOut: QueuedFanOut, after: string | null, limit: number): Promise<FanOutBatch> => {
      const start = after === null ? 0 : ids.indexOf(after) + 1;
      const slice = ids.slice(start, start + limit);
      const work = slice.map((endpointId) => ({ deliveryId: `d-${endpointId}`, endpointId }) as DeliveryWork);
      return { work, lastEndpoint: slice.at(-1) ?? null, walked: slice.length };
    },
    advance: async (_fanOut: QueuedFanOut, endpointId: string) => {
      moves.push(endpointId);
    },
    finish: async () => {
      finished = true;
      moves.push('finished');
    },
  };
  return { store: store as unknown as FanOutStore, ids, moves, isFinished: () => finished };
}

/** A pipeline whose attempts settle when the test says so. */
function fakePipeline() {
  const waiting: Array<{ work: DeliveryWork; settle: () => void }> = [];
  const pipeline = {
    inFlight: 0,
    process(work: DeliveryWork) {
      pipeline.inFlight += 1;
      return new Promise<void>((resolve) => {
        waiting.push({
          work,
          settle: () => {
            pipeline.inFlight -= 1;
            resolve();
          },
        });
      });
    },
  };
  return { pipeline, waiting };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('FanOutExpander', () => {
  it('holds at most maxInFlight deliveries, and moves the cursor past a batch only once it settled, in batch order', async () => {
    const { store, ids, moves, isFinished } = fakeStore(25);
    const { pipeline, waiting } = fakePipeline();
    const expander = new FanOutExpander({
      store, pipeline: pipeline as unknown as DeliveryPipeline, logger: createLogger('webhooks', 'silent'),
      batchSize: 10, maxInFlight: 20, maxPending: 1_000, signal: new AbortController().signal, intervalMs: 10_000,
    });
    expander.start();
    await tick();
    // Two batches fit under the cap, the third waits for room.
    expect(waiting).toHaveLength(20);
    expect(expander.inFlight).toBe(20);
    // The second batch settles first: the cursor waits for the first one.
    waiting.slice(10, 20).forEach((item) => item.settle());
    await tick();
    expect(moves).toEqual([]);
    expect(waiting).toHaveLength(25); // room for the third and last batch (5 endpoints left)
    waiting.slice(0, 10).forEach((item) => item.settle());
    await tick();
    expect(moves).toEqual([ids[9], ids[19]]);
    expect(isFinished()).toBe(false);
    waiting.slice(20).forEach((item) => item.settle());
    await tick();
    expect(moves).toEqual([ids[9], ids[19], 'finished']);
    // Every endpoint exactly once.
    expect(new Set(waiting.map((item) => item.work.endpointId))).toEqual(new Set(ids));
    expect(waiting).toHaveLength(25);
    await expander.stop(1_000);
  });

  it('stops creating batches at stop(), waits for the started ones and moves their cursor, never finishing early', async () => {
    const { store, ids, moves, isFinished } = fakeStore(50);
    const { pipeline, waiting } = fakePipeline();
    const expander = new FanOutExpander({
      store, pipeline: pipeline as unknown as DeliveryPipeline, logger: createLogger('webhooks', 'silent'),
      batchSize: 10, maxInFlight: 10, maxPending: 1_000, signal: new AbortController().signal, intervalMs: 10_000,
    });
    expander.start();
    await tick();
    expect(waiting).toHaveLength(10);
    const stopping = expander.stop(5_000);
    waiting.forEach((item) => item.settle());
    await stopping;
    await tick();
    expect(waiting).toHaveLength(10);
    expect(moves).toEqual([ids[9]]);
    expect(isFinished()).toBe(false);
  });
});

describe('shardBounds', () => {
  it('splits the id space by the first hex digit', () => {
    expect(shardBounds(0)).toEqual({ lower: '00000000-0000-0000-0000-000000000000', upper: '10000000-0000-0000-0000-000000000000' });
    expect(shardBounds(10)).toEqual({ lower: 'a0000000-0000-0000-0000-000000000000', upper: 'b0000000-0000-0000-0000-000000000000' });
    expect(shardBounds(15)).toEqual({ lower: 'f0000000-0000-0000-0000-000000000000', upper: null });
  });
});
