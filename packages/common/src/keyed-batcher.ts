import { context, type Context } from '@opentelemetry/api';
import { sharedWorkContext } from './trace-context.js';

interface Waiting<I, O> {
  item: I;
  resolve: (outcome: O) => void;
  reject: (error: unknown) => void;
  /** The trace context the item was submitted in. */
  at: Context;
}

/**
 * Groups concurrent work of one key into single calls of `run` (one statement, one commit): one call
 * per key is in flight at a time, and the items that arrive meanwhile go together in the next one
 * (at most `maxBatch`). A lone item is sent at once, so there is no added delay; under load the
 * batches grow by themselves (group commit). `run` answers one outcome per item, in order; if it
 * throws, every item of that call is rejected. `run` is meant for leaf work (a statement): it runs in
 * the trace context `sharedWorkContext` picks, which may be no trace at all.
 */
export class KeyedBatcher<I, O> {
  /** Per key with a call in flight: the items waiting for the next call. */
  private readonly queues = new Map<string, Array<Waiting<I, O>>>();

  constructor(
    private readonly run: (key: string, items: I[]) => Promise<O[]>,
    private readonly maxBatch = 100,
  ) {}

  submit(key: string, item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting<I, O> = { item, resolve, reject, at: context.active() };
      const queue = this.queues.get(key);
      if (queue) {
        queue.push(waiting);
        return;
      }
      this.queues.set(key, []);
      void this.drain(key, [waiting]);
    });
  }

  private async drain(key: string, first: Array<Waiting<I, O>>): Promise<void> {
    const queue = this.queues.get(key)!;
    for (let batch = first; batch.length > 0; batch = queue.splice(0, this.maxBatch)) {
      try {
        const items = batch.map((waiting) => waiting.item);
        const outcomes = await context.with(sharedWorkContext(batch.map((waiting) => waiting.at)), () => this.run(key, items));
        batch.forEach((waiting, index) => waiting.resolve(outcomes[index]!));
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    this.queues.delete(key);
  }
}
