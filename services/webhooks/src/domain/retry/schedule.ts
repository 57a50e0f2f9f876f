import { maxAttempts, retryTopicOf, type RetryTopic } from '@tws/contracts';

/**
 * The retry schedule of the contract: 5 attempts in total; attempt n+1 is due a delay after
 * attempt n failed (5 min, 30 min, 2 h, 8 h by default), each drawn uniformly within ±10 %
 * (`retryJitter`) so the retries of deliveries that failed together (an endpoint outage) do not
 * all come back at the same instant. Each waiting attempt lives on its own Kafka
 * delay topic, whose name stays the contract's whatever delays are configured (tests shorten them):
 * the topics and the attempt count are declared in @tws/contracts.
 */

const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `5m,30m,2h,8h` into milliseconds: exactly maxAttempts - 1 positive durations. */
export function parseRetryDelays(value: string): number[] {
  const parts = value.split(',').map((part) => part.trim()).filter((part) => part.length > 0);
  if (parts.length !== maxAttempts - 1) {
    throw new Error(`must list ${maxAttempts - 1} delays (before attempts 2..${maxAttempts}), e.g. 5m,30m,2h,8h`);
  }
  return parts.map((part) => {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(part);
    if (!match) throw new Error(`"${part}" is not a duration such as 500ms, 30s, 5m, 2h`);
    const ms = Math.round(Number(match[1]) * units[match[2]!]!);
    if (ms <= 0) throw new Error(`"${part}" must be longer than 0`);
    return ms;
  });
}

/** Each retry delay is drawn uniformly in [delay × (1 − jitter), delay × (1 + jitter)]. */
export const retryJitter = 0.1;

/** A delay with jitter; `random` is in [0, 1) like Math.random. */
export function jittered(delayMs: number, random: () => number = Math.random): number {
  return Math.round(delayMs * (1 + retryJitter * (2 * random() - 1)));
}

export type NextStep =
  | { kind: 'done' }
  | { kind: 'retry'; attempt: number; topic: RetryTopic; dueAt: Date }
  | { kind: 'dead' };

/**
 * What follows an attempt: nothing after a success, the next delay topic (due after the configured
 * delay ± `retryJitter`), or the dead-letter topic.
 */
export function nextStep(
  attempt: number,
  succeeded: boolean,
  failedAt: Date,
  delaysMs: readonly number[],
  random: () => number = Math.random,
): NextStep {
  if (!Number.isInteger(attempt) || attempt < 1 || attempt > maxAttempts) throw new RangeError(`attempt ${attempt} out of range`);
  if (succeeded) return { kind: 'done' };
  if (attempt === maxAttempts) return { kind: 'dead' };
  return {
    kind: 'retry',
    attempt: attempt + 1,
    topic: retryTopicOf(attempt + 1),
    dueAt: new Date(failedAt.getTime() + jittered(delaysMs[attempt - 1]!, random)),
  };
}
