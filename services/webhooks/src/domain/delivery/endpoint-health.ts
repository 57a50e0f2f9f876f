import type { Logger } from '@tws/common';
import type { Counter } from 'prom-client';

/** What EndpointHealth needs of the endpoint store (store/endpoints.ts). */
export interface HealthStore {
  recordHealth(succeeded: string[], failed: string[], disableAfterSeconds: number): Promise<string[]>;
}

export interface EndpointHealthOptions {
  store: HealthStore;
  /** WEBHOOK_AUTO_DISABLE_AFTER_SECONDS; 0 = never disable (nothing is recorded then). */
  disableAfterSeconds: number;
  autoDisabled: Pick<Counter, 'inc'>;
  logger: Logger;
}

/**
 * Auto-disable (issue #18): the outcome of every logged attempt, per endpoint, is collected here and
 * written in one batch (workers/endpoint-upkeep.ts flushes every second), so the attempt path pays a
 * Map write, not a statement. Per endpoint only the last outcome of a batch counts: a success ends the
 * endpoint's failure streak, a failure starts one or, once the streak is `disableAfterSeconds` old,
 * disables the endpoint (logged at warn with its id, counted).
 */
export class EndpointHealth {
  private outcomes = new Map<string, boolean>();

  constructor(private readonly options: EndpointHealthOptions) {}

  /** An attempt to `endpointId` was logged: `ok` = it succeeded. */
  observe(endpointId: string, ok: boolean): void {
    if (this.options.disableAfterSeconds === 0) return;
    // Re-inserted so the Map's order is that of the last outcomes (bounded by the number of endpoints).
    this.outcomes.delete(endpointId);
    this.outcomes.set(endpointId, ok);
  }

  /** Endpoints waiting to be written. */
  get size(): number {
    return this.outcomes.size;
  }

  /** Writes the collected outcomes; on failure they are merged back (newer outcomes win) for the next flush. */
  async flush(): Promise<string[]> {
    if (this.outcomes.size === 0) return [];
    const batch = this.outcomes;
    this.outcomes = new Map();
    const { succeeded, failed } = splitOutcomes(batch);
    let disabled: string[];
    try {
      disabled = await this.options.store.recordHealth(succeeded, failed, this.options.disableAfterSeconds);
    } catch (error) {
      for (const [endpointId, ok] of batch) if (!this.outcomes.has(endpointId)) this.outcomes.set(endpointId, ok);
      throw error;
    }
    for (const endpointId of disabled) {
      this.options.autoDisabled.inc();
      this.options.logger.warn(
        { endpointId, disabledReason: 'failing', afterSeconds: this.options.disableAfterSeconds },
        'webhook endpoint disabled: every attempt failed for the auto-disable window; re-enable with PATCH {"enabled": true}',
      );
    }
    return disabled;
  }
}

/** The endpoints whose last outcome succeeded, and those whose last outcome failed. */
export function splitOutcomes(outcomes: ReadonlyMap<string, boolean>): { succeeded: string[]; failed: string[] } {
  const succeeded: string[] = [];
  const failed: string[] = [];
  for (const [endpointId, ok] of outcomes) (ok ? succeeded : failed).push(endpointId);
  return { succeeded, failed };
}
