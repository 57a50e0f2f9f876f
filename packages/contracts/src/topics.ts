/**
 * Kafka topic names and consumer groups: the one place they are declared. The tasks service writes
 * `task-events.v1`; the webhooks service reads it and owns the other topics.
 */

/** Task change events: key = task id, value = the contract's webhook payload (see task-events.ts). */
export const taskEventsTopic = 'task-events.v1';

/** Attempts per delivery: the first at once, then one from each delay topic. */
export const maxAttempts = 5;

/** Delay topics by the attempt they carry: attempt 2 waits on `webhooks.retry.5m`, … attempt 5 on `webhooks.retry.8h`. */
export const retryTopics = ['webhooks.retry.5m', 'webhooks.retry.30m', 'webhooks.retry.2h', 'webhooks.retry.8h'] as const;
export type RetryTopic = (typeof retryTopics)[number];

/** Manual redeliveries: a new attempt chain, attempt 1 at once. */
export const redeliveryTopic = 'webhooks.redeliver';

/** Permanently failed deliveries (after the last failed attempt), kept for operators. */
export const deadLetterTopic = 'webhooks.dead';

/** The attempt number a delay topic carries, or undefined for any other topic. */
export function attemptOfTopic(topic: string): number | undefined {
  const index = (retryTopics as readonly string[]).indexOf(topic);
  return index === -1 ? undefined : index + 2;
}

/** The delay topic that carries `attempt` (2 … maxAttempts). */
export function retryTopicOf(attempt: number): RetryTopic {
  const topic = retryTopics[attempt - 2];
  if (!topic) throw new RangeError(`no delay topic carries attempt ${attempt}`);
  return topic;
}

/** Consumer groups of the webhooks service: fresh events, and scheduled attempts (delays and redeliveries). */
export const webhookConsumerGroups = { events: 'webhooks.deliveries', scheduled: 'webhooks.scheduled-attempts' } as const;
