import { PeriodicJob, type Logger } from '@tws/common';
import type { EndpointStore } from '../store/endpoints.js';

export interface DeletedEndpointsOptions {
  endpoints: EndpointStore;
  logger: Logger;
  /** How often the replica asks Postgres for new deletions (bounds how late another replica stops). */
  pollMs?: number;
  /** Each poll reads again this far before the newest deletion seen (a transaction's now() is its start). */
  overlapMs?: number;
  /** How long a deletion is remembered (longer than any attempt can wait in memory). */
  keepMs?: number;
}

/**
 * Endpoints deleted on any replica, known here within one poll (250 ms by default): the pipeline
 * checks it as an attempt starts, so no new request goes to an endpoint after its DELETE returned
 * (plus a poll). Attempts loaded from Postgres afterwards see the deletion themselves.
 */
export class DeletedEndpoints {
  private readonly deleted = new Map<string, number>();
  private newest: Date | undefined;
  private readonly overlapMs: number;
  private readonly keepMs: number;
  /** A poll at once, then one `pollMs` after each ends; a failed poll is retried at the next. */
  private readonly poller: PeriodicJob;

  constructor(private readonly options: DeletedEndpointsOptions) {
    this.overlapMs = options.overlapMs ?? 60_000;
    this.keepMs = options.keepMs ?? 3_600_000;
    this.poller = new PeriodicJob({
      name: 'polling deleted webhook endpoints',
      intervalMs: options.pollMs ?? 250,
      firstRunAfterMs: 0,
      run: () => this.poll(),
      logger: options.logger,
    });
  }

  has(endpointId: string): boolean {
    return this.deleted.has(endpointId);
  }

  /** A deletion made by this replica: effective at once. */
  add(endpointId: string): void {
    this.deleted.set(endpointId, Date.now());
  }

  /** One poll; the first reads the last hour. */
  async poll(): Promise<void> {
    const since = this.newest ? new Date(this.newest.getTime() - this.overlapMs) : undefined;
    const rows = await this.options.endpoints.deletedSince(since);
    const now = Date.now();
    for (const row of rows) {
      if (!this.deleted.has(row.id)) this.deleted.set(row.id, now);
      if (!this.newest || row.deletedAt > this.newest) this.newest = row.deletedAt;
    }
    for (const [id, learnt] of this.deleted) if (now - learnt > this.keepMs) this.deleted.delete(id);
  }

  /** Polls until stopped; a failed poll is retried at the next tick. */
  start(): void {
    this.poller.start();
  }

  /** Stops polling (waits for a poll in progress). */
  stop(): Promise<void> {
    return this.poller.stop();
  }
}
