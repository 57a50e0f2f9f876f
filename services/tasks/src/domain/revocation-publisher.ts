import { inTransaction, type Logger, type Pool, type PoolClient } from '@tws/common';
import type { RevocationPublisherMetrics } from '../metrics.js';
import { announceRevocation, listeningReplicas } from '../store/revocations.js';
import type { RevocationAck, RevocationNotice } from './revocations.js';

export interface Confirmation {
  /** Every replica listening at commit time acknowledged within the bound. */
  confirmed: boolean;
  /** Replicas that were listening when the revocation committed. */
  replicas: number;
  /** Those that did not acknowledge in time. */
  missing: string[];
  ms: number;
}

/** How use cases revoke: the change, the notification and the wait for the gateways. */
export interface Revocations {
  /**
   * Runs `change` and notifies `notice` in one transaction, then waits until the watchers of every
   * replica that was listening at commit time applied it (or were cut off, which makes them stop
   * trusting their caches), at most `confirmTimeoutMs`. The change is committed either way; the
   * result says whether the wait was complete.
   */
  publish(pool: Pool, notice: RevocationNotice, change: (db: PoolClient) => Promise<void>): Promise<Confirmation>;
}

interface Pending {
  acked: Set<string>;
  expected?: Set<string>;
  done?: () => void;
}

/**
 * The revoking side: RevokeApiKey, RemoveMember and ChangeMemberRole return once every gateway replica has
 * applied the revocation, so "the very next request" after it is refused everywhere, without any
 * sleep. The acknowledgements come back from each replica through Postgres (`auth_revocation_acks`,
 * heard by this replica's LISTEN session) — or directly, for this replica's own watchers.
 */
export class RevocationPublisher implements Revocations {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly options: {
      confirmTimeoutMs: number;
      logger: Logger;
      metrics: RevocationPublisherMetrics;
    },
  ) {}

  async publish(pool: Pool, notice: RevocationNotice, change: (db: PoolClient) => Promise<void>): Promise<Confirmation> {
    const started = performance.now();
    // Registered before the commit: an acknowledgement may come back before COMMIT's reply does.
    const pending: Pending = { acked: new Set() };
    this.pending.set(notice.id, pending);
    let replicas: string[];
    try {
      replicas = await inTransaction(pool, async (db) => {
        await change(db);
        const listening = await listeningReplicas(db);
        await announceRevocation(db, notice);
        return listening;
      });
    } catch (error) {
      this.pending.delete(notice.id);
      throw error;
    }
    pending.expected = new Set(replicas);
    const complete = (): boolean => [...pending.expected!].every((replica) => pending.acked.has(replica));
    let timer: NodeJS.Timeout | undefined;
    if (!complete()) {
      await new Promise<void>((resolve) => {
        pending.done = resolve;
        timer = setTimeout(resolve, this.options.confirmTimeoutMs);
      });
    }
    clearTimeout(timer);
    this.pending.delete(notice.id);
    const missing = replicas.filter((replica) => !pending.acked.has(replica));
    const ms = Math.round((performance.now() - started) * 10) / 10;
    const confirmed = missing.length === 0;
    this.options.metrics.confirmSeconds.observe({ outcome: confirmed ? 'confirmed' : 'timeout' }, ms / 1000);
    if (confirmed) {
      this.options.logger.info({ revocationId: notice.id, kind: notice.kind, replicas: replicas.length, ms }, 'revocation applied by every gateway');
    } else {
      this.options.logger.warn(
        { revocationId: notice.id, kind: notice.kind, replicas: replicas.length, missing, ms },
        'revocation committed, but not every tasks replica confirmed its gateways in time (their streams stop being trusted)',
      );
    }
    return { confirmed, replicas: replicas.length, missing, ms };
  }

  /** An acknowledgement heard on `auth_revocation_acks` (or from this replica's own hub). */
  acknowledged(ack: RevocationAck): void {
    const pending = this.pending.get(ack.id);
    if (!pending) return;
    pending.acked.add(ack.replica);
    if (pending.expected && [...pending.expected].every((replica) => pending.acked.has(replica))) pending.done?.();
  }
}
