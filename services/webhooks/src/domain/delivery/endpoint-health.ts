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

/** One endpoint's attempts since the last flush. */
export interface Outcomes {
  anySucceeded: boolean;
  lastSucceeded: boolean;
}

/**
 * Auto-disable (issue #18): the outcome of every logged attempt, per endpoint, is collected here and
 * written in one batch (workers/endpoint-upkeep.ts flushes every second), so the attempt path pays a
 * Map write, not a statement. Any success in a batch ends the endpoint's failure streak; a batch
 * whose last attempt failed starts one (after that success, if any) or, once the streak is
 * `disableAfterSeconds` old, disables the endpoint (logged at warn with its id, counted).
 */
export class EndpointHealth {
  private outcomes = new Map<string, Outcomes>();

  constructor(private readonly options: EndpointHealthOptions) {}

  /** An attempt to `endpointId` was logged: `ok` = it succeeded. */
  observe(endpointId: string, ok: boolean): void {
    if (this.options.disableAfterSeconds === 0) return;
    const seen = this.outcomes.get(endpointId);
    if (seen) {
      seen.anySucceeded ||= ok;
      seen.lastSucceeded = ok;
    } else {
      // Bounded by the number of endpoints attempted within one flush interval.
      this.outcomes.set(endpointId, { anySucceeded: ok, lastSucceeded: ok });
    }
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
      for (const [endpointId, older] of batch) this.outcomes.set(endpointId, merge(older, this.outcomes.get(endpointId)));
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

/** Outcomes of an older batch followed by those of a newer one (if any). */
export function merge(older: Outcomes, newer: Outcomes | undefined): Outcomes {
  if (!newer) return older;
  return { anySucceeded: older.anySucceeded || newer.anySucceeded, lastSucceeded: newer.lastSucceeded };
}

/**
 * `succeeded`: endpoints with a success in the batch (their streak ends); `failed`: endpoints whose
 * last attempt failed (a streak starts, after the success if both). An endpoint can be in both.
 */
export function splitOutcomes(outcomes: ReadonlyMap<string, Outcomes>): { succeeded: string[]; failed: string[] } {
  const succeeded: string[] = [];
  const failed: string[] = [];
  for (const [endpointId, seen] of outcomes) {
    if (seen.anySucceeded) succeeded.push(endpointId);
    if (!seen.lastSucceeded) failed.push(endpointId);
  }
  return { succeeded, failed };
}
