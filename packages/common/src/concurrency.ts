import { context, type Context } from '@opentelemetry/api';
import { sharedWorkContext } from './trace-context.js';

const settled = Promise.resolve();

/**
 * A counting semaphore: at most `limit` holders; waiters are served first come, first served. The
 * limit may change: a lower one takes effect as holders release (none is interrupted).
 */
export class Semaphore {
  private active = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private limit: number) {}

  setLimit(limit: number): void {
    this.limit = Math.max(1, limit);
    while (this.active < this.limit && this.waiters.length > 0) {
      this.active += 1;
      this.waiters.shift()!();
    }
  }

  get inUse(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /** Takes a place if one is free now (never ahead of a waiter: there are waiters only while none is free). */
  tryAcquire(): boolean {
    if (this.active >= this.limit) return false;
    this.active += 1;
    return true;
  }

  /** Resolves once a place is taken; `release()` gives it back. Prefer `tryAcquire()` first on hot paths: no promise when one is free. */
  acquire(): Promise<void> {
    if (this.tryAcquire()) return settled;
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.active <= this.limit ? this.waiters.shift() : undefined;
    if (next) next();
    else this.active -= 1;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (!this.tryAcquire()) await this.acquire();
    try {
      return await work();
    } finally {
      this.release();
    }
  }
}

/**
 * Runs work items with the same key one after another, in the order they were submitted; items
 * with different keys run independently.
 */
export class KeyedSerializer {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    // Nothing ahead (the usual case): the work starts now, without a promise to wait on first.
    const result = previous ? previous.then(work, work) : startNow(work);
    // The key's tail settles once this work did, and forgets the key if nothing queued behind it.
    const settle = (): void => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
    const tail: Promise<void> = result.then(settle, settle);
    this.tails.set(key, tail);
    return result;
  }

  get size(): number {
    return this.tails.size;
  }
}

/** `work()`, with a synchronous throw turned into a rejection (as `promise.then(work)` would). */
function startNow<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Collects items for a short time (or until `maxItems`) and hands them to `flush` together; each
 * caller gets its own item's result. Turns many small writes into one round trip. At most
 * `maxConcurrentFlushes` run at once: under load, items arriving meanwhile wait and go out in a
 * bigger batch instead of queueing for database connections one small batch at a time. `flush` is
 * meant for leaf work (a statement): it runs in the trace context `sharedWorkContext` picks.
 */
export class MicroBatcher<Item, Result> {
  private items: Item[] = [];
  private waiters: Array<{ resolve: (result: Result) => void; reject: (error: unknown) => void; at: Context }> = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing = 0;

  constructor(
    private readonly flush: (items: Item[]) => Promise<Result[]>,
    private readonly options: { maxItems: number; maxDelayMs: number; maxConcurrentFlushes?: number },
  ) {}

  add(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.items.push(item);
      this.waiters.push({ resolve, reject, at: context.active() });
      if (this.items.length >= this.options.maxItems) this.flushNow();
      else this.timer ??= setTimeout(() => this.flushNow(), this.options.maxDelayMs);
    });
  }

  private flushNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.items.length === 0 || this.flushing >= (this.options.maxConcurrentFlushes ?? 2)) return;
    const items = this.items.splice(0, this.options.maxItems);
    const waiters = this.waiters.splice(0, items.length);
    this.flushing += 1;
    // In the trace of a sampled item, or in none (trace-context.ts), not in the timer's or the last adder's.
    context
      .with(sharedWorkContext(waiters.map((waiter) => waiter.at)), () => this.flush(items))
      .then(
        (results) => waiters.forEach((waiter, index) => waiter.resolve(results[index]!)),
        (error: unknown) => waiters.forEach((waiter) => waiter.reject(error)),
      )
      .finally(() => {
        this.flushing -= 1;
        if (this.items.length > 0) this.flushNow();
      });
  }
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Retries a step that must eventually happen (a database write, a Kafka produce) with capped
 * exponential back-off until it succeeds or `signal` aborts (shutdown), then rethrows.
 */
export async function retryUntilDone<T>(
  work: () => Promise<T>,
  options: { signal: AbortSignal; onError: (error: unknown, attempt: number) => void; maxDelayMs?: number },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (options.signal.aborted) throw error;
      options.onError(error, attempt);
      await sleep(Math.min(options.maxDelayMs ?? 5_000, 100 * 2 ** Math.min(attempt, 10)), options.signal);
      if (options.signal.aborted) throw error;
    }
  }
}
