import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { createKafka } from './kafka.js';
import { checkPendingRequestsIntervalMs, requestQueuePath, scheduleCheckPendingRequests } from './kafka-request-queue.js';
import { createLogger } from './logger.js';

/** A request queue's state as kafkajs keeps it, with its check counted. */
function queue(state: { throttledUntil?: number; pending?: number } = {}) {
  const checks = vi.fn();
  const self = {
    throttledUntil: state.throttledUntil ?? -1,
    throttleCheckTimeoutId: null as NodeJS.Timeout | null,
    pending: Array.from({ length: state.pending ?? 0 }, () => ({})),
    checkPendingRequests: checks,
    schedule: scheduleCheckPendingRequests,
  };
  return { self, checks };
}

describe('kafkajs request queue check', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('arms no timer for a queue with nothing pending and no throttle (kafkajs re-armed one every millisecond)', () => {
    vi.useFakeTimers();
    const { self, checks } = queue();
    self.schedule();
    expect(self.throttleCheckTimeoutId).toBeNull();
    vi.advanceTimersByTime(1_000);
    expect(checks).not.toHaveBeenCalled();
  });

  it('checks pending requests in 10 ms when no throttle is in force', () => {
    vi.useFakeTimers();
    const { self, checks } = queue({ pending: 2 });
    self.schedule();
    vi.advanceTimersByTime(checkPendingRequestsIntervalMs - 1);
    expect(checks).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(checks).toHaveBeenCalledTimes(1);
    expect(self.throttleCheckTimeoutId).toBeNull();
  });

  it('checks pending requests when the throttle ends, and keeps a timer while a throttle is in force with nothing pending', () => {
    vi.useFakeTimers();
    const throttled = queue({ pending: 1, throttledUntil: Date.now() + 250 });
    throttled.self.schedule();
    vi.advanceTimersByTime(249);
    expect(throttled.checks).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(throttled.checks).toHaveBeenCalledTimes(1);

    const idle = queue({ throttledUntil: Date.now() + 100 });
    idle.self.schedule();
    expect(idle.self.throttleCheckTimeoutId).not.toBeNull();
    vi.advanceTimersByTime(100);
    expect(idle.checks).toHaveBeenCalledTimes(1);
  });

  it('arms one timer at a time', () => {
    vi.useFakeTimers();
    const { self, checks } = queue({ pending: 1 });
    self.schedule();
    self.schedule();
    self.schedule();
    vi.advanceTimersByTime(checkPendingRequestsIntervalMs);
    expect(checks).toHaveBeenCalledTimes(1);
  });

  it('is what a client made by createKafka runs: an idle producer checks its queues no more, and still sends', async () => {
    const stack = inject('stack');
    const kafka = createKafka({ clientId: 'request-queue-test', brokers: stack.kafkaBrokers, logger: createLogger('test', 'silent') });
    const RequestQueue = createRequire(import.meta.url)(requestQueuePath) as { prototype: { checkPendingRequests(this: unknown): void; scheduleCheckPendingRequests: unknown } };
    expect(RequestQueue.prototype.scheduleCheckPendingRequests).toBe(scheduleCheckPendingRequests);

    const topic = `request-queue-test-${randomUUID()}`;
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [{ value: 'before the idle spell' }] });

    const original = RequestQueue.prototype.checkPendingRequests;
    let checks = 0;
    RequestQueue.prototype.checkPendingRequests = function counted(this: unknown) {
      checks += 1;
      original.call(this);
    };
    try {
      // Idle: with kafkajs's own method each open connection (admin's and producer's) checks ~once a millisecond.
      await sleep(500);
      expect(checks).toBeLessThan(10);
    } finally {
      RequestQueue.prototype.checkPendingRequests = original;
    }
    await producer.send({ topic, acks: -1, messages: [{ value: 'after it' }] });
    const offsets = await admin.fetchTopicOffsets(topic);
    expect(offsets.map((partition) => partition.high)).toEqual(['2']);
    await producer.disconnect();
    await admin.disconnect();
  });
});
