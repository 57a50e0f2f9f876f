import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '@tws/common';
import type { WebhookMetrics } from '../../metrics.js';
import { adaptFetchWhenIdle, sleep } from '@tws/common';
import { PartitionTracker } from './partition-tracker.js';

export interface IncomingMessage {
  topic: string;
  partition: number;
  message: KafkaMessage;
}

export interface Acceptance {
  /** One promise per accepted message, in order, from the first one of the chunk; each settles when the message is done. */
  settled: Array<Promise<void>>;
  /** Set when the messages after the accepted ones are not due yet: the partition pauses until then. */
  pauseUntil?: number;
}

export interface MessageHandler {
  accept(messages: IncomingMessage[]): Promise<Acceptance>;
  /** True while the handler holds as much unfinished work as it should (fetching waits). */
  saturated(): boolean;
}

export interface RunnerOptions {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  handler: MessageHandler;
  logger: Logger;
  metrics: WebhookMetrics;
  /** Messages handed to the handler at once. */
  chunkSize?: number;
  commitIntervalMs?: number;
  partitionsConsumedConcurrently?: number;
  /** Fetch batching: the broker answers once `fetchMinBytes` are there or `fetchMaxWaitMs` passed. */
  fetchMinBytes?: number;
  fetchMaxWaitMs?: number;
  /**
   * When set, a fetch after one that brought nothing waits up to this long for a single byte instead
   * (kafka-adaptive-fetch.ts): no empty fetch every `fetchMaxWaitMs` while idle, no wait for the
   * first record after it.
   */
  fetchIdleWaitMs?: number;
}

/**
 * A Kafka consumer whose messages finish out of order and out of band: a batch is handed over
 * and the consumer fetches on while the work runs, so a slow message never holds up the ones after
 * it. Offsets are committed per partition up to the first unfinished message only (at-least-once).
 * A partition whose next message is not due yet is paused (kafkajs pause/resume) and resumed on
 * time; other partitions go on. Shutdown: stop fetching, finish in-flight work, commit, leave.
 */
export class TrackedConsumer {
  private readonly consumer: Consumer;
  private readonly trackers = new Map<string, PartitionTracker>();
  private readonly resumeTimers = new Map<string, NodeJS.Timeout>();
  private commitTimer: NodeJS.Timeout | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private committing: Promise<void> = Promise.resolve();
  private draining = false;

  constructor(private readonly options: RunnerOptions) {
    if (options.fetchIdleWaitMs !== undefined) adaptFetchWhenIdle(options.groupId, { idleWaitMs: options.fetchIdleWaitMs });
    this.consumer = options.kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: 30_000,
      heartbeatInterval: 3_000,
      minBytes: this.options.fetchMinBytes ?? 1,
      maxWaitTimeInMs: this.options.fetchMaxWaitMs ?? 100,
      // A fetch's messages stay in memory until handed over (longer while the handler is saturated):
      // 256 KiB per partition is still ~350 task events, far more than one chunk.
      maxBytesPerPartition: 256 * 1024,
      maxBytes: 2 * 1024 * 1024,
      retry: { retries: 10 },
    });
    this.consumer.on(this.consumer.events.GROUP_JOIN, ({ payload }) => {
      // Forget partitions this member lost: their unfinished work must not commit over the new owner.
      const assigned = new Set(
        Object.entries(payload.memberAssignment).flatMap(([topic, partitions]) => partitions.map((partition) => `${topic}/${partition}`)),
      );
      for (const key of this.trackers.keys()) if (!assigned.has(key)) this.trackers.delete(key);
      options.logger.info({ groupId: options.groupId, assignment: payload.memberAssignment }, 'consumer group joined');
    });
    this.consumer.on(this.consumer.events.CRASH, ({ payload }) => {
      options.logger.error({ err: payload.error, groupId: options.groupId, restart: payload.restart }, 'consumer crashed');
      // kafkajs starts a crashed consumer again only after a retriable error. After another one (e.g.
      // "Failed to find group coordinator" as the broker goes away) it stays stopped, and this service
      // would stay ready with nobody consuming: start it again here, backing off while it fails.
      if (!payload.restart) this.restartLater(1_000);
    });
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    for (const topic of this.options.topics) await this.consumer.subscribe({ topic, fromBeginning: true });
    await this.run();
    this.commitTimer = setInterval(() => void this.commitProgress(), this.options.commitIntervalMs ?? 250);
  }

  /** Runs the connected consumer; after a crash, connects it first (its subscriptions are kept). */
  private async run(reconnect = false): Promise<void> {
    if (reconnect) await this.consumer.connect();
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 6,
      eachBatch: (payload) => this.eachBatch(payload),
    });
  }

  private restartLater(delayMs: number): void {
    if (this.draining || this.restartTimer !== undefined) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.draining) return;
      this.options.logger.warn({ groupId: this.options.groupId }, 'starting the crashed consumer again');
      this.run(true).catch((error: unknown) => {
        this.options.logger.error({ err: error, groupId: this.options.groupId }, 'consumer restart failed; trying again');
        this.restartLater(Math.min(delayMs * 2, 30_000));
      });
    }, delayMs);
  }

  private trackerFor(topic: string, partition: number): PartitionTracker {
    const key = `${topic}/${partition}`;
    let tracker = this.trackers.get(key);
    if (!tracker) {
      tracker = new PartitionTracker(topic, partition);
      this.trackers.set(key, tracker);
    }
    return tracker;
  }

  private async eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale, pause }: EachBatchPayload): Promise<void> {
    const { topic, partition } = batch;
    this.options.metrics.consumerLag.set({ topic, partition: String(partition) }, Number(batch.offsetLag()));
    const tracker = this.trackerFor(topic, partition);
    const chunkSize = this.options.chunkSize ?? 100;
    let index = 0;
    while (index < batch.messages.length) {
      if (this.draining || !isRunning() || isStale()) return;
      while (this.options.handler.saturated()) {
        if (this.draining || !isRunning() || isStale()) return;
        await sleep(20);
        await heartbeat();
      }
      const chunk: IncomingMessage[] = [];
      // Messages refetched after a rebalance that this member is still working on are not taken twice.
      while (index < batch.messages.length && chunk.length < chunkSize) {
        const message = batch.messages[index]!;
        if (tracker.has(message.offset)) resolveOffset(message.offset);
        else chunk.push({ topic, partition, message });
        index += 1;
      }
      if (chunk.length === 0) continue;
      const { settled, pauseUntil } = await this.options.handler.accept(chunk);
      settled.forEach((done, position) => {
        const offset = chunk[position]!.message.offset;
        tracker.add(offset, done);
        resolveOffset(offset);
      });
      if (pauseUntil !== undefined && settled.length < chunk.length) {
        this.pauseUntil(topic, partition, pauseUntil, pause);
        return;
      }
      await heartbeat();
    }
  }

  private pauseUntil(topic: string, partition: number, until: number, pause: () => () => void): void {
    const key = `${topic}/${partition}`;
    const resume = pause();
    clearTimeout(this.resumeTimers.get(key));
    const timer = setTimeout(
      () => {
        this.resumeTimers.delete(key);
        if (!this.draining) resume();
      },
      Math.max(0, until - Date.now()),
    );
    this.resumeTimers.set(key, timer);
  }

  /** Commits, per partition, the offset after the last message finished with everything before it. */
  private commitProgress(): Promise<void> {
    this.committing = this.committing.then(async () => {
      const offsets = [...this.trackers.values()].flatMap((tracker) => {
        const next = tracker.committable();
        return next === undefined ? [] : [{ tracker, topic: tracker.topic, partition: tracker.partition, offset: next }];
      });
      if (offsets.length === 0) return;
      try {
        await this.consumer.commitOffsets(offsets.map(({ topic, partition, offset }) => ({ topic, partition, offset })));
        for (const { tracker, offset } of offsets) tracker.committed(offset);
      } catch (error) {
        // A rebalance in progress or a coordinator move; the next round commits again.
        this.options.logger.warn({ err: error, groupId: this.options.groupId }, 'offset commit failed; will retry');
      }
    });
    return this.committing;
  }

  /** Stop fetching, let accepted work finish (bounded), commit what finished, leave the group. */
  async stop(timeoutMs: number): Promise<void> {
    this.draining = true;
    clearTimeout(this.restartTimer);
    for (const timer of this.resumeTimers.values()) clearTimeout(timer);
    this.resumeTimers.clear();
    this.consumer.pause(this.options.topics.map((topic) => ({ topic })));
    const deadline = Date.now() + timeoutMs;
    const unfinished = () => [...this.trackers.values()].reduce((sum, tracker) => sum + tracker.unfinished, 0);
    while (unfinished() > 0 && Date.now() < deadline) {
      await sleep(50);
      await this.commitProgress();
    }
    clearInterval(this.commitTimer);
    await this.commitProgress();
    if (unfinished() > 0) {
      this.options.logger.warn({ groupId: this.options.groupId, unfinished: unfinished() }, 'stopping with unfinished messages; they will be redelivered');
    }
    await this.consumer.disconnect();
  }
}
