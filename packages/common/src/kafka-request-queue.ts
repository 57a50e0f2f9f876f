import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4 (its last release) checks each broker connection's queue of pending requests on a
 * timer, and re-arms that timer after every check, also when nothing is pending and no throttle is
 * in force: the delay is then `throttledUntil - Date.now()`, negative (`throttledUntil` starts at
 * -1), which Node turns into 1 ms. So every connection of every producer, consumer and admin runs a
 * check a millisecond, for as long as it is open (tulios/kafkajs#1556, #1704; on Node 24 each
 * re-arm also warns, `TimeoutNegativeWarning`). On the bench's 2 cores that was ~4 % of the tasks
 * service's busy time during a GET run and most of an idle service's CPU.
 *
 * `installKafkaRequestQueueFix` replaces the method on kafkajs's `RequestQueue` class with the one
 * its open fix proposes (tulios/kafkajs#1768, review): the same timer while requests are pending
 * (at the throttle's end, or in 10 ms) or a throttle is in force, and none when neither is. A
 * request pushed later is sent at once or, when it cannot be, schedules its own check (`push`), and
 * one that finishes re-checks the queue (`fulfillRequest`): nothing waits on the removed loop.
 */

/** kafkajs's own interval for a queue with pending requests and no throttle to wait out (its `CHECK_PENDING_REQUESTS_INTERVAL`). */
export const checkPendingRequestsIntervalMs = 10;

/** What the method reads and writes of a kafkajs `RequestQueue`. */
interface RequestQueueState {
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  pending: unknown[];
  checkPendingRequests(): void;
}

/** `RequestQueue#scheduleCheckPendingRequests`, without the timer for an idle, unthrottled queue. */
export function scheduleCheckPendingRequests(this: RequestQueueState): void {
  if (this.throttleCheckTimeoutId) return;
  let scheduleAt = this.throttledUntil - Date.now();
  if (this.pending.length > 0) scheduleAt = scheduleAt > 0 ? scheduleAt : checkPendingRequestsIntervalMs;
  else if (scheduleAt <= 0) return;
  this.throttleCheckTimeoutId = setTimeout(() => {
    this.throttleCheckTimeoutId = null;
    this.checkPendingRequests();
  }, scheduleAt);
}

const require = createRequire(import.meta.url);
/** kafkajs's request queue class (one per broker connection). */
export const requestQueuePath = require.resolve('kafkajs/src/network/requestQueue/index.js');

/** Puts the method above on kafkajs's `RequestQueue` (once; every queue, made before or after, uses it). */
export function installKafkaRequestQueueFix(): void {
  const RequestQueue = require(requestQueuePath) as { prototype: { scheduleCheckPendingRequests: unknown } };
  RequestQueue.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
}
