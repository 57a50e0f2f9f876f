import type { Logger } from '@tws/common';
import type { EndpointStore } from '../db/endpoints.js';

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
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly pollMs: number;
  private readonly overlapMs: number;
  private readonly keepMs: number;

  constructor(private readonly options: DeletedEndpointsOptions) {
    this.pollMs = options.pollMs ?? 250;
    this.overlapMs = options.overlapMs ?? 60_000;
    this.keepMs = options.keepMs ?? 3_600_000;
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
    const loop = async (): Promise<void> => {
      try {
        await this.poll();
      } catch (error) {
        this.options.logger.warn({ err: error }, 'polling deleted webhook endpoints failed; retrying');
      }
      if (!this.stopped) this.timer = setTimeout(() => void loop(), this.pollMs);
    };
    void loop();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
