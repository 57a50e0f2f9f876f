import { randomUUID } from 'node:crypto';
import type { Logger } from '@tws/common';
import type { BacklogStore } from '../store/backlog.js';
import type { DeliveryStore } from '../store/deliveries.js';
import { sleep } from '@tws/common';
import type { DeliveryPipeline } from '../domain/delivery/pipeline.js';

export interface DrainerOptions {
  backlog: BacklogStore;
  store: DeliveryStore;
  pipeline: DeliveryPipeline;
  logger: Logger;
  /** Deliveries in flight on this replica above which nothing more is drained (WEBHOOK_MAX_PENDING_DELIVERIES). */
  maxPending: number;
  intervalMs?: number;
  leaseMs?: number;
}

/**
 * Drains endpoint backlogs (parked deliveries): every tick, finds the endpoints that have one, takes
 * or renews their lease (one replica per endpoint, so a backlog is attempted oldest first), and hands
 * the oldest parked deliveries of each leased endpoint to the pipeline, as many as the endpoint has
 * room for here. An endpoint that hangs therefore holds only its own backlog in Postgres; memory
 * holds at most its queue limit of deliveries. A lease lapses when its holder stops renewing it.
 */
export class BacklogDrainer {
  private readonly owner = `${process.pid}-${randomUUID()}`;
  /** Delivery ids being attempted, per leased endpoint. */
  private readonly inFlight = new Map<string, Set<string>>();
  private readonly leased = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly intervalMs: number;
  private readonly leaseMs: number;

  constructor(private readonly options: DrainerOptions) {
    this.intervalMs = options.intervalMs ?? 200;
    this.leaseMs = options.leaseMs ?? 15_000;
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), this.intervalMs);
  }

  /** Runs a tick now, or right after the running one. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.tick()
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'draining endpoint backlogs failed; retrying'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async tick(): Promise<void> {
    const { backlog, pipeline } = this.options;
    const checkedAt = Date.now();
    const endpoints = await backlog.endpointsWithBacklog();
    const withBacklog = new Set(endpoints);
    pipeline.forgetParked(withBacklog, checkedAt);
    // Leases of drained backlogs are given back once nothing of theirs runs here.
    const done = [...this.leased].filter((id) => !withBacklog.has(id) && !this.inFlight.get(id)?.size);
    for (const id of done) this.leased.delete(id);
    await backlog.release(this.owner, done);
    if (endpoints.length === 0) return;
    const held = await backlog.lease(this.owner, endpoints, this.leaseMs);
    for (const id of this.leased) if (!held.includes(id) && !withBacklog.has(id)) this.leased.delete(id);
    for (const endpointId of held) {
      this.leased.add(endpointId);
      if (this.stopped || pipeline.inFlight >= this.options.maxPending) return;
      const room = Math.min(pipeline.freeSlots(endpointId), this.options.maxPending - pipeline.inFlight);
      if (room <= 0) continue;
      const running = this.inFlight.get(endpointId) ?? new Set<string>();
      this.inFlight.set(endpointId, running);
      const ids = await backlog.oldest(endpointId, [...running], room);
      if (ids.length === 0) continue;
      const work = await this.options.store.load(ids);
      for (const id of ids) {
        const delivery = work.get(id);
        if (!delivery) continue;
        running.add(id);
        // In backlog order; the (endpoint, task) serializer keeps a task's first attempts in order.
        void pipeline
          .process(delivery, delivery.nextAttempt, { ordered: true, drained: true })
          .catch((error: unknown) => this.options.logger.warn({ err: error, deliveryId: id }, 'backlog attempt interrupted; it stays parked'))
          .finally(() => {
            running.delete(id);
            if (running.size === 0) this.kick();
          });
      }
    }
  }

  /** Stops draining, waits (bounded) for the attempts it started, and gives its leases back. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    const deadline = Date.now() + timeoutMs;
    const busy = () => [...this.inFlight.values()].some((ids) => ids.size > 0);
    while (busy() && Date.now() < deadline) await sleep(50);
    await this.options.backlog.release(this.owner, [...this.leased]).catch(() => undefined);
  }
}
