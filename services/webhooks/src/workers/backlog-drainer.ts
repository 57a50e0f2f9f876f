import { randomUUID } from 'node:crypto';
import type { Logger } from '@tws/common';
import { backlogShards, type BacklogPlace, type BacklogStore, type ShardKey, type ShardLease } from '../store/backlog.js';
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
  /** How long a shard stays free before a replica that holds half of its endpoint's shards takes it too. */
  shareGraceMs?: number;
  /** A walk through an endpoint's backlog starts again from its oldest row at least this often. */
  rewalkMs?: number;
}

/** Where this replica's walk through an endpoint's backlog stands (for the shards it held then). */
interface Walk {
  shards: string;
  after: BacklogPlace;
  startedAt: number;
}

/**
 * Drains endpoint backlogs (parked deliveries): every tick, finds the endpoints that have one, takes
 * or renews the leases of shards of them (store/backlog.ts: a shard is a set of tasks, so each task's
 * deliveries are attempted by one replica, oldest first), and hands the oldest parked deliveries of
 * the shards it holds to the pipeline, as many as the endpoint has room for here. A replica takes at
 * most half of an endpoint's shards at once, and a shard nobody took for `shareGraceMs` too: with two
 * or more replicas a backlog is drained by two of them, at both replicas' concurrency for the
 * endpoint; alone, a replica drains all of it. An endpoint that hangs therefore holds only its own
 * backlog in Postgres; memory holds at most its queue limit of deliveries. A lease lapses when its
 * holder stops renewing it.
 */
export class BacklogDrainer {
  private readonly owner = `${process.pid}-${randomUUID()}`;
  /** Delivery ids being attempted, with their shard, per endpoint. */
  private readonly inFlight = new Map<string, Map<string, number>>();
  /** Shards held, per endpoint. */
  private readonly held = new Map<string, Set<number>>();
  /** Since when a shard (`endpoint/shard`) of a backlog was seen without a holder. */
  private readonly freeSince = new Map<string, number>();
  /** Walks through backlogs bigger than a batch, per endpoint. */
  private readonly walks = new Map<string, Walk>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly intervalMs: number;
  private readonly leaseMs: number;
  private readonly shareGraceMs: number;
  private readonly rewalkMs: number;

  constructor(private readonly options: DrainerOptions) {
    this.intervalMs = options.intervalMs ?? 200;
    this.leaseMs = options.leaseMs ?? 15_000;
    this.shareGraceMs = options.shareGraceMs ?? 1_000;
    this.rewalkMs = options.rewalkMs ?? 5_000;
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
    await this.releaseDrained(withBacklog);
    if (endpoints.length === 0) return;
    const claimed = await backlog.claimEndpoints(endpoints, this.leaseMs);
    const wanted = this.wantedShards(claimed, await backlog.shardLeases(claimed), Date.now());
    const held = await backlog.leaseShards(this.owner, wanted, this.leaseMs);
    // What this tick holds replaces what the claimed endpoints held; the shards of other endpoints
    // stay listed until releaseDrained gives them back.
    for (const endpointId of claimed) this.held.delete(endpointId);
    for (const { endpointId, shard } of held) {
      const shards = this.held.get(endpointId) ?? new Set<number>();
      shards.add(shard);
      this.held.set(endpointId, shards);
    }
    for (const endpointId of claimed) {
      const shards = this.held.get(endpointId);
      if (shards === undefined) continue;
      if (this.stopped || pipeline.inFlight >= this.options.maxPending) return;
      const room = Math.min(pipeline.freeSlots(endpointId), this.options.maxPending - pipeline.inFlight);
      if (room <= 0) continue;
      await this.drain(endpointId, [...shards], room);
    }
  }

  /**
   * Hands the oldest parked deliveries of the endpoint's shards held here to the pipeline (at most
   * `room`). A backlog bigger than a batch is walked on from where the last batch ended: from its
   * oldest row, each batch read again every row still in flight here and every entry the drained ones
   * left dead, 162 ms a batch of 214 behind a growing backlog (bench, sustained run). The walk starts
   * again from the oldest row once it reaches the end, when the shards held change, and every
   * `rewalkMs`, so a delivery parked behind it (after newer ones were handed out) waits at most that long.
   */
  private async drain(endpointId: string, shards: number[], room: number): Promise<void> {
    const { backlog, pipeline } = this.options;
    const skip = [...(this.inFlight.get(endpointId)?.keys() ?? [])];
    const shardsKey = [...shards].sort((a, b) => a - b).join(',');
    const now = Date.now();
    let walk = this.walks.get(endpointId);
    if (walk && (walk.shards !== shardsKey || now - walk.startedAt >= this.rewalkMs)) walk = undefined;
    const picked = await backlog.oldest(endpointId, shards, skip, room, walk?.after);
    const last = picked.at(-1);
    if (picked.length < room || !last) this.walks.delete(endpointId);
    else this.walks.set(endpointId, { shards: shardsKey, after: last.place, startedAt: walk?.startedAt ?? now });
    if (picked.length === 0) return;
    const work = await this.options.store.load(picked.map((item) => item.id));
    for (const { id, shard } of picked) {
      const delivery = work.get(id);
      if (!delivery) continue;
      // Only endpoints with attempts running here have an entry (stop() waits for them).
      const running = this.inFlight.get(endpointId) ?? new Map<string, number>();
      this.inFlight.set(endpointId, running);
      running.set(id, shard);
      // In backlog order; the (endpoint, task) serializer keeps a task's first attempts in order.
      void pipeline
        .process(delivery, delivery.nextAttempt, { ordered: true, drained: true })
        .catch((error: unknown) => this.options.logger.warn({ err: error, deliveryId: id }, 'backlog attempt interrupted; it stays parked'))
        .finally(() => {
          running.delete(id);
          if (running.size === 0) {
            if (this.inFlight.get(endpointId) === running) this.inFlight.delete(endpointId);
            this.kick();
          }
        });
    }
  }

  /**
   * The shards to hold: those held already, and free ones up to half of the endpoint's shards, or
   * beyond that once free for `shareGraceMs` (so another replica can take its half first).
   */
  private wantedShards(claimed: string[], leases: ShardLease[], now: number): ShardKey[] {
    const half = Math.ceil(backlogShards / 2);
    const wanted: ShardKey[] = [];
    const seen = new Set<string>();
    // Grouped once: up to 1,000 endpoints × 8 leases are read every tick.
    const leasedOf = new Map<string, ShardLease[]>();
    for (const lease of leases) {
      const leased = leasedOf.get(lease.endpointId);
      if (leased) leased.push(lease);
      else leasedOf.set(lease.endpointId, [lease]);
    }
    for (const endpointId of claimed) {
      const leased = leasedOf.get(endpointId) ?? [];
      const taken = new Set(leased.map((lease) => lease.shard));
      const shards = leased.filter((lease) => lease.owner === this.owner).map((lease) => lease.shard);
      for (let shard = 0; shard < backlogShards; shard += 1) {
        if (taken.has(shard)) continue;
        const key = `${endpointId}/${shard}`;
        seen.add(key);
        const since = this.freeSince.get(key) ?? now;
        this.freeSince.set(key, since);
        if (shards.length < half || now - since >= this.shareGraceMs) shards.push(shard);
      }
      wanted.push(...shards.map((shard) => ({ endpointId, shard })));
    }
    for (const key of this.freeSince.keys()) if (!seen.has(key)) this.freeSince.delete(key);
    return wanted;
  }

  /** Gives back the shards of drained backlogs once nothing of theirs runs here, and then the endpoints' shared rows. */
  private async releaseDrained(withBacklog: ReadonlySet<string>): Promise<void> {
    const done: ShardKey[] = [];
    for (const [endpointId, shards] of this.held) {
      if (withBacklog.has(endpointId)) continue;
      const running = new Set(this.inFlight.get(endpointId)?.values() ?? []);
      for (const shard of shards) {
        if (running.has(shard)) continue;
        done.push({ endpointId, shard });
        shards.delete(shard);
      }
      if (shards.size === 0) {
        this.held.delete(endpointId);
        this.walks.delete(endpointId);
      }
    }
    if (done.length === 0) return;
    await this.options.backlog.releaseShards(this.owner, done);
    await this.options.backlog.releaseEndpoints([...new Set(done.map((key) => key.endpointId))]);
  }

  /** Stops draining, waits (bounded) for the attempts it started, and gives its leases back. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight.size > 0 && Date.now() < deadline) await sleep(50);
    const keys = [...this.held].flatMap(([endpointId, shards]) => [...shards].map((shard) => ({ endpointId, shard })));
    await this.options.backlog.releaseShards(this.owner, keys).catch(() => undefined);
    await this.options.backlog.releaseEndpoints([...this.held.keys()]).catch(() => undefined);
  }
}
