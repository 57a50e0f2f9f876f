import { randomUUID } from 'node:crypto';
import type { Logger } from '@tws/common';
import { retryUntilDone, sleep } from '@tws/common';
import { taskEventsTopic } from '@tws/contracts';
import type { DeliveryPipeline } from '../domain/delivery/pipeline.js';
import type { FanOutKey, FanOutStore, QueuedFanOut } from '../store/fanouts.js';
import type { DeliveryWork } from '../store/delivery-work.js';
import { underRequest } from './consumer/handlers.js';

export interface ExpanderOptions {
  store: FanOutStore;
  pipeline: DeliveryPipeline;
  logger: Logger;
  /** Deliveries created per statement, and the size above which a workspace's events fan out in batches. */
  batchSize: number;
  /** Fan-out deliveries accepted and not settled in this replica before the next batch waits (bounds the heap). */
  maxInFlight: number;
  /** The pipeline's own cap (WEBHOOK_MAX_PENDING_DELIVERIES): no batch while it is reached, so Kafka events keep flowing. */
  maxPending: number;
  signal: AbortSignal;
  intervalMs?: number;
  leaseMs?: number;
}

/** New (workspace, shard) leases one tick takes at most, and only with room for a batch: the replicas share a fan-out. */
const newLeasesPerTick = 2;

const keyOf = ({ workspaceId, shard }: FanOutKey): string => `${workspaceId}\u0000${shard}`;

/**
 * Creates the deliveries of large fan-outs (events recorded with a cursor per shard of the endpoint
 * ids in `fanouts`, see store/fan-out-statement.ts) in batches by endpoint id, and hands them to the
 * pipeline as first attempts in event order. One replica at a time expands a (workspace, shard) (a
 * lease, renewed every tick), one fan-out after the other (the next starts once the previous is fully
 * created; the pipeline's per (endpoint, task) serializer keeps their requests in order). A replica
 * takes new leases only while it has room for a batch, two a tick, so the replicas share a large
 * fan-out and an endpoint's deliveries stay in one replica.
 *
 * Bounded: at most `maxInFlight` of these deliveries are unsettled here (no batch is created before
 * there is room for it), so memory does not grow with the fan-out; each statement writes one batch.
 * Durable: the cursor moves past a batch only once all its deliveries are settled (attempt logged and
 * its retry on a delay topic, or parked), and in batch order; after a crash the next owner creates the
 * batch again (the unique index returns the same deliveries) and the pipeline skips the ones already
 * attempted, so nothing is lost and only an attempt in flight at the crash can repeat (at-least-once,
 * as everywhere).
 */
export class FanOutExpander {
  private readonly owner = `${process.pid}-${randomUUID()}`;
  /** Leases held, by keyOf. */
  private readonly held = new Map<string, FanOutKey>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly intervalMs: number;
  private readonly leaseMs: number;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private unsettled = 0;
  private wake: (() => void) | undefined;

  constructor(private readonly options: ExpanderOptions) {
    this.intervalMs = options.intervalMs ?? 500;
    this.leaseMs = options.leaseMs ?? 15_000;
  }

  /** Fan-out deliveries of this replica not settled yet. */
  get inFlight(): number {
    return this.unsettled;
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), this.intervalMs);
    this.kick();
  }

  /** Looks for fan-outs (and renews leases) now, or right after the running look. */
  kick(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick()
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'looking for fan-outs failed; retrying'))
      .finally(() => {
        this.ticking = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async tick(): Promise<void> {
    const { store } = this.options;
    const free = await store.free();
    const wanted = [...this.held.values(), ...(this.hasRoom() ? free.slice(0, newLeasesPerTick) : [])];
    const holding = new Map((await store.lease(this.owner, wanted, this.leaseMs)).map((key) => [keyOf(key), key]));
    for (const [id, key] of this.held) {
      if (!holding.has(id)) {
        this.options.logger.warn({ workspaceId: key.workspaceId, shard: key.shard }, 'lost a fan-out lease; its next batches are left to the new holder');
        this.held.delete(id);
      }
    }
    for (const [id, key] of holding) {
      this.held.set(id, key);
      if (this.stopped || this.running.has(id)) continue;
      const run = this.runShard(key)
        .catch((error: unknown) => this.options.logger.warn({ err: error, workspaceId: key.workspaceId }, 'fan-out interrupted; the cursor keeps its progress'))
        .finally(() => {
          this.running.delete(id);
          // Room again: take the next lease now rather than at the next tick.
          this.kick();
        });
      this.running.set(id, run);
    }
  }

  /** The fan-outs of a (workspace, shard) in event order, while this replica holds its lease. */
  private async runShard(key: FanOutKey): Promise<void> {
    const id = keyOf(key);
    const finishing: Array<Promise<void>> = [];
    let afterSeq: string | null = null;
    try {
      while (this.active(id)) {
        const fanOut = await this.durably(() => this.options.store.next(key, afterSeq), 'read the next fan-out');
        if (!fanOut) break;
        afterSeq = fanOut.seq;
        const { settled, complete } = await this.expand(fanOut);
        finishing.push(settled);
        if (!complete) break;
      }
      await Promise.all(finishing);
    } finally {
      // Given back only once nothing of it runs here; fan-outs queued meanwhile are leased again on a later tick.
      if (!this.stopped && this.held.delete(id)) await this.options.store.release(this.owner, [key]);
    }
  }

  private active(id: string): boolean {
    return !this.stopped && this.held.has(id);
  }

  private hasRoom(): boolean {
    const { batchSize, maxInFlight, maxPending, pipeline } = this.options;
    return this.unsettled === 0 || (this.unsettled + batchSize <= maxInFlight && pipeline.inFlight + batchSize <= maxPending);
  }

  /**
   * Creates the fan-out's batches as room allows; resolves once all are created (complete), or once
   * it stopped creating them (stopping, lease lost), with a promise that settles when the batches
   * created are settled and the cursor moved past them (the fan-out finished if complete).
   */
  private async expand(fanOut: QueuedFanOut): Promise<{ settled: Promise<void>; complete: boolean }> {
    const { store, batchSize } = this.options;
    let after = fanOut.afterEndpoint;
    // Cursor moves in batch order: each batch's advance waits for the previous one's.
    let cursor: Promise<void> = Promise.resolve();
    const id = keyOf(fanOut);
    for (;;) {
      await this.roomForBatch();
      if (!this.active(id)) return { settled: cursor, complete: false };
      const batch = await this.durably(() => store.expand(fanOut, after, batchSize), 'create a fan-out batch');
      // One CONSUMER span a batch, as one a message for the events fanned out at once (handlers.ts).
      const settled =
        batch.work.length === 0
          ? Promise.resolve()
          : underRequest(fanOut.requestId, fanOut.traceparent, taskEventsTopic, { eventId: fanOut.eventId, deliveries: batch.work.length }, () =>
              Promise.all(batch.work.map((work) => this.attempt(work))),
            );
      const last = batch.lastEndpoint;
      const lastBatch = batch.walked < batchSize || last === null;
      cursor = cursor.then(async () => {
        await settled;
        if (lastBatch) await this.durably(() => store.finish(fanOut), 'finish a fan-out');
        else if (last !== null) await this.durably(() => store.advance(fanOut, last), 'move a fan-out cursor');
      });
      if (lastBatch) return { settled: cursor, complete: true };
      after = last;
    }
  }

  private attempt(work: DeliveryWork): Promise<void> {
    this.unsettled += 1;
    return this.options.pipeline.process(work, 1, { ordered: true }).finally(() => {
      this.unsettled -= 1;
      this.wake?.();
    });
  }

  /** Waits until one more batch fits under both caps (re-checked at least every 50 ms: the pipeline's load changes by itself). */
  private async roomForBatch(): Promise<void> {
    while (!this.stopped && !this.hasRoom()) {
      await Promise.race([new Promise<void>((resolve) => (this.wake = resolve)), sleep(50)]);
    }
  }

  private durably<T>(step: () => Promise<T>, what: string): Promise<T> {
    return retryUntilDone(step, {
      signal: this.options.signal,
      onError: (error, attempt) => this.options.logger.warn({ err: error, attempt }, `${what} failed; retrying`),
    });
  }

  /** Creates no more batches, waits (bounded) for the deliveries it started and their cursors, gives the leases back. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.wake?.();
    await this.ticking;
    await Promise.race([Promise.all(this.running.values()), sleep(timeoutMs)]);
    await this.options.store.release(this.owner, [...this.held.values()]).catch(() => undefined);
    this.held.clear();
  }
}
