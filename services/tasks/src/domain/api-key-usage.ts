import type { Logger, Queryable } from '@tws/common';
import { touchApiKey } from '../store/api-keys.js';

const intervalMs = 60_000;
/** Bound of the per-replica memory of recent touches; past it, the memory starts over. */
const maxRemembered = 50_000;

/**
 * "Last used at" of API keys, recorded cheaply and off the critical path: AuthenticateApiKey calls
 * `record` after it found the key and does not wait for it. Each replica writes a key at most once
 * a minute (an in-memory throttle), and the UPDATE itself is conditional on the stored value being
 * more than a minute old, so several replicas cost at most one row write a minute per key. The
 * gateways cache lookups, so "last used" is when a gateway last asked: at most a minute plus the
 * gateway's cache lifetime behind.
 */
export class ApiKeyUsage {
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  record(apiKeyId: string): void {
    const now = this.now();
    const last = this.touched.get(apiKeyId);
    if (last !== undefined && now - last < intervalMs) return;
    if (this.touched.size >= maxRemembered) this.touched.clear();
    this.touched.set(apiKeyId, now);
    touchApiKey(this.db, apiKeyId).catch((error: unknown) => {
      // Best effort: a failed write only leaves "last used" older; let the next use try again.
      this.touched.delete(apiKeyId);
      this.logger.warn({ err: error, apiKeyId }, 'could not record API key use');
    });
  }
}
