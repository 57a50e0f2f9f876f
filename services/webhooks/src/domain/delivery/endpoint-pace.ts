import { eventLoopSaturation } from '@tws/common';

export interface PaceOptions {
  /** Attempts in flight per endpoint (WEBHOOK_ENDPOINT_CONCURRENCY). */
  concurrency: number;
  /** Most deliveries one endpoint may hold here, whatever its pace (WEBHOOK_ENDPOINT_QUEUE_LIMIT). */
  queueLimit: number;
  /** Longest expected wait of a queued delivery before further ones are parked (WEBHOOK_ENDPOINT_MAX_QUEUE_WAIT_MS). */
  maxQueueWaitMs: number;
  /** Whether this replica is saturated; default: its event loop active ≥ 90 % of the last second. */
  saturated?: (() => boolean) | undefined;
}

/** One delivery an endpoint holds: waiting for its turn, then running. */
export interface PaceTicket {
  readonly endpointId: string;
  readonly enteredAt: number;
  startedAt?: number;
}

interface EndpointState {
  /** Tickets not started yet, oldest first (a Set keeps insertion order). */
  waiting: Set<PaceTicket>;
  /** Tickets whose request is in flight (at most `concurrency`). */
  running: Set<PaceTicket>;
  /** Tickets started and not left yet (being logged and handed off). */
  settling: number;
  /** Smoothed attempt duration (ms); undefined until one ended. */
  averageMs: number | undefined;
}

const maxRemembered = 10_000;

/** What a quick endpoint of a saturated replica may hold here: no limit of its own (see `EndpointPace`). */
const unlimited = Number.MAX_SAFE_INTEGER;

/**
 * How much work an endpoint may hold in this replica: its concurrency, plus a queue it drains
 * within `maxQueueWaitMs` at its pace (the smoothed duration of its attempts, or the age of its
 * oldest request in flight if longer: a hanging endpoint shows as slow before any attempt ends),
 * never more than `queueLimit`; and nothing more while its oldest waiting delivery has waited longer
 * than `maxQueueWaitMs` (an endpoint starved by its workspace's share). A fast endpoint absorbs a
 * burst; a hanging one holds about its concurrency, and the rest of its work is parked. O(1) per
 * delivery; the age check reads at most `concurrency` entries, only when the endpoint is at its
 * concurrency.
 *
 * The pace counts only from half of `maxQueueWaitMs` (1 s by default): an attempt's duration is
 * measured in this process, so it holds this replica's own latency too, and on a saturated machine
 * an endpoint that answers at once took 160–720 ms an attempt (bench, two replicas, load 5 on two
 * cores). Paced by that, it was parked at 74–189 deliveries, its backlog (an extra write and two
 * reads per delivery, drained at that same pace) grew faster than it drained, and the replica never
 * left it while the load lasted. Below the floor only `queueLimit` and the wait rule bound the queue.
 *
 * Neither binds a quick endpoint while the replica itself is saturated (its event loop active ≥ 90 %
 * of the last second: busy, or waiting for a CPU) and the endpoint holds no more than twice the
 * average of the endpoints holding work here. Then every endpoint waits for the replica, not for
 * itself, and parking helps none of them: a parked delivery costs a write and two reads more, so a
 * replica that parked because it was behind fell further behind, parked more, and stayed there while
 * the load lasted (bench/HISTORY.md, session 29: 36,121 of 40,000 deliveries parked in the sustained
 * run on a slow host). Its deliveries wait in Kafka instead: the consumer stops fetching at
 * WEBHOOK_MAX_PENDING_DELIVERIES, which bounds the heap. A slow or hanging endpoint is still paced,
 * and one holding more than its share of the replica's work is still parked by the two rules.
 */
export class EndpointPace {
  private readonly endpoints = new Map<string, EndpointState>();
  /** Deliveries held here, over all endpoints, and the endpoints holding any. */
  private held = 0;
  private holding = 0;
  private readonly saturated: () => boolean;

  constructor(private readonly options: PaceOptions) {
    this.saturated = options.saturated ?? (() => eventLoopSaturation.saturated());
  }

  load(endpointId: string): number {
    const state = this.endpoints.get(endpointId);
    return state ? state.waiting.size + state.running.size + state.settling : 0;
  }

  /** Deliveries the endpoint may hold here now. */
  capacity(endpointId: string, now = Date.now()): number {
    const { concurrency, queueLimit, maxQueueWaitMs } = this.options;
    const state = this.endpoints.get(endpointId);
    const load = this.load(endpointId);
    if (!state || load < concurrency) return queueLimit;
    let paceMs = state.averageMs ?? 0;
    for (const ticket of state.running) paceMs = Math.max(paceMs, now - (ticket.startedAt ?? now));
    const quick = paceMs < maxQueueWaitMs / 2;
    // Behind with the rest of a saturated replica: the wait is the replica's (class comment).
    if (quick && load <= (2 * this.held) / Math.max(1, this.holding) && this.saturated()) return unlimited;
    const oldestWaiting = state.waiting.values().next().value;
    if (oldestWaiting && now - oldestWaiting.enteredAt > maxQueueWaitMs) return 0;
    if (quick) return queueLimit;
    // What it finishes within maxQueueWaitMs at its pace (concurrency attempts per paceMs), at least one.
    return Math.max(1, Math.min(queueLimit, Math.floor((concurrency * maxQueueWaitMs) / paceMs)));
  }

  /**
   * Requests the endpoint may have in flight: its concurrency once its attempts are known to be
   * quick; an eighth of it until one ended (slow start: a new or silent endpoint does not get every
   * connection at once); as many as finish within `maxQueueWaitMs` at its smoothed pace, at least
   * one, when slow (a hanging endpoint keeps a few requests, and a few connections, not all).
   */
  concurrency(endpointId: string): number {
    const { concurrency, maxQueueWaitMs } = this.options;
    const averageMs = this.endpoints.get(endpointId)?.averageMs;
    if (averageMs === undefined) return Math.max(1, Math.ceil(concurrency / 8));
    if (averageMs <= 0) return concurrency;
    return Math.max(1, Math.min(concurrency, Math.floor((concurrency * maxQueueWaitMs) / averageMs)));
  }

  /** Room left before the endpoint's further deliveries are parked. */
  room(endpointId: string): number {
    return Math.max(0, this.capacity(endpointId) - this.load(endpointId));
  }

  /** The endpoint takes one more delivery (waiting for its turn). */
  enter(endpointId: string): PaceTicket {
    const ticket: PaceTicket = { endpointId, enteredAt: Date.now() };
    if (this.load(endpointId) === 0) this.holding += 1;
    this.held += 1;
    this.stateOf(endpointId).waiting.add(ticket);
    return ticket;
  }

  /** Its request starts; call the returned function when it ended. */
  started(ticket: PaceTicket): () => void {
    const state = this.stateOf(ticket.endpointId);
    state.waiting.delete(ticket);
    ticket.startedAt = Date.now();
    state.running.add(ticket);
    return () => {
      if (!state.running.delete(ticket)) return;
      state.settling += 1;
      const durationMs = Date.now() - (ticket.startedAt ?? Date.now());
      state.averageMs = state.averageMs === undefined ? durationMs : state.averageMs * 0.8 + durationMs * 0.2;
    };
  }

  /** The delivery is settled (or was never attempted). */
  leave(ticket: PaceTicket): void {
    const state = this.endpoints.get(ticket.endpointId);
    if (!state) return;
    const before = this.load(ticket.endpointId);
    if (!state.waiting.delete(ticket) && !state.running.delete(ticket)) state.settling = Math.max(0, state.settling - 1);
    const after = this.load(ticket.endpointId);
    this.held -= before - after;
    if (before > 0 && after === 0) this.holding -= 1;
  }

  private stateOf(endpointId: string): EndpointState {
    let state = this.endpoints.get(endpointId);
    if (!state) {
      if (this.endpoints.size >= maxRemembered) this.forgetIdle();
      state = { waiting: new Set(), running: new Set(), settling: 0, averageMs: undefined };
      this.endpoints.set(endpointId, state);
    }
    return state;
  }

  private forgetIdle(): void {
    for (const [endpointId] of this.endpoints) if (this.load(endpointId) === 0) this.endpoints.delete(endpointId);
  }
}
