export interface PaceOptions {
  /** Attempts in flight per endpoint (WEBHOOK_ENDPOINT_CONCURRENCY). */
  concurrency: number;
  /** Most deliveries one endpoint may hold here, whatever its pace (WEBHOOK_ENDPOINT_QUEUE_LIMIT). */
  queueLimit: number;
  /** Longest expected wait of a queued delivery before further ones are parked (WEBHOOK_ENDPOINT_MAX_QUEUE_WAIT_MS). */
  maxQueueWaitMs: number;
}

interface EndpointState {
  /** Deliveries between the decision to attempt and the end of settling. */
  load: number;
  /** Start times of the requests in flight (at most `concurrency`). */
  running: Set<{ startedAt: number }>;
  /** Smoothed attempt duration (ms); undefined until one ended. */
  averageMs: number | undefined;
}

const maxRemembered = 10_000;

/**
 * How much work an endpoint may hold in this replica: its concurrency, plus a queue as long as it
 * drains within `maxQueueWaitMs` at its pace (the smoothed duration of its attempts, or the age of
 * its oldest request in flight if longer: a hanging endpoint shows as slow before any attempt ends),
 * never more than `queueLimit`. A fast endpoint absorbs a burst; a hanging one holds about its
 * concurrency, and the rest of its work is parked. O(1) per attempt; the age check reads at most
 * `concurrency` entries and only when the endpoint is at its concurrency.
 */
export class EndpointPace {
  private readonly endpoints = new Map<string, EndpointState>();

  constructor(private readonly options: PaceOptions) {}

  load(endpointId: string): number {
    return this.endpoints.get(endpointId)?.load ?? 0;
  }

  /** Deliveries the endpoint may hold here now. */
  capacity(endpointId: string, now = Date.now()): number {
    const { concurrency, queueLimit, maxQueueWaitMs } = this.options;
    const state = this.endpoints.get(endpointId);
    if (!state || state.load < concurrency) return queueLimit;
    let paceMs = state.averageMs ?? 0;
    for (const request of state.running) paceMs = Math.max(paceMs, now - request.startedAt);
    if (paceMs <= 0) return queueLimit;
    // A queued delivery waits about (its place / concurrency) attempts' durations.
    return Math.min(queueLimit, concurrency * (1 + Math.floor(maxQueueWaitMs / paceMs)));
  }

  /** Room left before the endpoint's further deliveries are parked. */
  room(endpointId: string): number {
    return Math.max(0, this.capacity(endpointId) - this.load(endpointId));
  }

  enter(endpointId: string): void {
    this.stateOf(endpointId).load += 1;
  }

  leave(endpointId: string): void {
    const state = this.endpoints.get(endpointId);
    if (state) state.load = Math.max(0, state.load - 1);
  }

  /** Marks a request start; call the returned function when it ended. */
  started(endpointId: string): () => void {
    const state = this.stateOf(endpointId);
    const request = { startedAt: Date.now() };
    state.running.add(request);
    return () => {
      state.running.delete(request);
      const durationMs = Date.now() - request.startedAt;
      state.averageMs = state.averageMs === undefined ? durationMs : state.averageMs * 0.8 + durationMs * 0.2;
    };
  }

  private stateOf(endpointId: string): EndpointState {
    let state = this.endpoints.get(endpointId);
    if (!state) {
      if (this.endpoints.size >= maxRemembered) this.forgetIdle();
      state = { load: 0, running: new Set(), averageMs: undefined };
      this.endpoints.set(endpointId, state);
    }
    return state;
  }

  private forgetIdle(): void {
    for (const [endpointId, state] of this.endpoints) if (state.load === 0) this.endpoints.delete(endpointId);
  }
}
