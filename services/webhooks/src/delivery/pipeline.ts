import type { Logger } from '@tws/common';
import type { AttemptRecord, DeliveryStore, DeliveryWork } from '../db/deliveries.js';
import type { WebhookMetrics } from '../metrics.js';
import type { AttemptResult, WebhookSender } from '../net/sender.js';
import type { HandoffProducer } from './handoff-producer.js';
import { scheduleHeaders, type SourceRef } from '../consumer/messages.js';
import { deadLetterTopic, maxAttempts, nextStep, type NextStep } from '../retry/schedule.js';
import type { SecretBox } from '../signing/secret-box.js';
import { KeyedSerializer, MicroBatcher, retryUntilDone, Semaphore } from '../util/concurrency.js';

export interface PipelineOptions {
  store: DeliveryStore;
  sender: WebhookSender;
  secrets: SecretBox;
  producer: HandoffProducer;
  metrics: WebhookMetrics;
  logger: Logger;
  retryDelaysMs: readonly number[];
  concurrency: number;
  endpointConcurrency: number;
  /** Aborted at shutdown: steps that retry until done give up, so the source offset stays uncommitted. */
  signal: AbortSignal;
}

export interface AttemptContext {
  /** Where the event entered (task-events.v1 partition and offset), for the retry headers. */
  original?: SourceRef | undefined;
  /** First attempts of one task to one endpoint go out in event order. */
  ordered?: boolean;
  /** Kafka timestamp of the event, for the event-to-delivery histogram. */
  eventTimestampMs?: number | undefined;
}

/**
 * Makes attempts and moves deliveries through their states: attempt → log it (compare-and-set) →
 * hand the next step (retry message or dead letter) to Kafka → note the hand-off. The returned
 * promise settles when the source message of this attempt may be committed.
 *
 * Concurrency: a global limit, a per-endpoint limit (one slow endpoint cannot take every slot),
 * and a per (endpoint, task) serializer for first attempts.
 */
export class DeliveryPipeline {
  private readonly global: Semaphore;
  private readonly perEndpoint = new Map<string, Semaphore>();
  private readonly order = new KeyedSerializer();
  private readonly recorder: MicroBatcher<AttemptRecord, boolean>;
  private readonly handoffDone: MicroBatcher<string, undefined>;
  private pending = 0;
  /** Decrypted secrets by endpoint (AES-GCM per attempt costs more than the HTTP request). */
  private readonly secretCache = new Map<string, { sealed: Buffer; secret: string }>();

  constructor(private readonly options: PipelineOptions) {
    this.global = new Semaphore(options.concurrency);
    this.recorder = new MicroBatcher((records) => options.store.completeAttempts(records), { maxItems: 200, maxDelayMs: 2 });
    this.handoffDone = new MicroBatcher(
      async (ids) => {
        await options.store.clearHandoff(ids);
        return ids.map(() => undefined);
      },
      { maxItems: 500, maxDelayMs: 5 },
    );
  }

  /** Deliveries accepted and not settled yet. */
  get inFlight(): number {
    return this.pending;
  }

  /**
   * Handles a delivery reached by a message that asks for `attempt`: makes the attempt if the
   * delivery still waits for it, or finishes a hand-off a crashed owner left half done, or does
   * nothing (already done, cancelled, endpoint deleted).
   */
  async process(work: DeliveryWork, attempt: number, context: AttemptContext = {}): Promise<void> {
    this.pending += 1;
    this.options.metrics.inFlight.set(this.pending);
    try {
      if (work.endpointDeleted) {
        if (work.state === 'pending') await this.durably(() => this.options.store.cancel([work.deliveryId]), 'cancel delivery');
        return;
      }
      if (work.state === 'failed' && work.handoffPending) {
        await this.handOff(work, { kind: 'dead' }, context.original, undefined);
        return;
      }
      if (work.state !== 'pending') return;
      if (work.nextAttempt > attempt) {
        // Attempt already made; its retry message may not have reached Kafka before a crash.
        if (work.handoffPending && work.nextAttemptAt) {
          await this.handOff(
            work,
            { kind: 'retry', attempt: work.nextAttempt, topic: retryTopicFor(work.nextAttempt), dueAt: work.nextAttemptAt },
            context.original,
            undefined,
          );
        }
        return;
      }
      if (work.nextAttempt < attempt) return;
      // Order holds for the requests only: the next event's attempt goes out once this one's response
      // is in, while this one is still being logged and handed off.
      const send = () => this.sendLimited(work);
      const result = await (context.ordered ? this.order.run(`${work.endpointId}/${work.taskId}`, send) : send());
      await this.settle(work, attempt, context, result);
    } finally {
      this.pending -= 1;
      this.options.metrics.inFlight.set(this.pending);
    }
  }

  private endpointLimit(endpointId: string): Semaphore {
    let semaphore = this.perEndpoint.get(endpointId);
    if (!semaphore) {
      semaphore = new Semaphore(this.options.endpointConcurrency);
      this.perEndpoint.set(endpointId, semaphore);
    }
    return semaphore;
  }

  private async sendLimited(work: DeliveryWork): Promise<AttemptResult> {
    const endpointLimit = this.endpointLimit(work.endpointId);
    const result = await endpointLimit.run(() => this.global.run(() => this.send(work)));
    if (endpointLimit.inUse === 0 && endpointLimit.queued === 0) this.perEndpoint.delete(work.endpointId);
    return result;
  }

  /** Metrics, the attempt log (compare-and-set) and the hand-off of the next step. */
  private async settle(work: DeliveryWork, attempt: number, context: AttemptContext, result: AttemptResult): Promise<void> {
    const { metrics } = this.options;
    metrics.deliveries.inc({ result: result.outcome, attempt: String(attempt) });
    metrics.duration.observe({ result: result.outcome }, result.durationMs / 1000);
    if (result.outcome === 'blocked') metrics.ssrfBlocked.inc({ stage: 'delivery' });
    if (result.outcome === 'succeeded' && attempt === 1 && context.eventTimestampMs !== undefined) {
      metrics.eventToFirstAttempt.observe(Math.max(0, Date.now() - context.eventTimestampMs) / 1000);
    }

    const finishedAt = new Date(result.startedAt.getTime() + result.durationMs);
    const step = nextStep(attempt, result.outcome === 'succeeded', finishedAt, this.options.retryDelaysMs);
    const record: AttemptRecord = {
      deliveryId: work.deliveryId,
      attempt,
      startedAt: result.startedAt,
      durationMs: result.durationMs,
      outcome: result.outcome,
      statusCode: 'statusCode' in result && result.statusCode !== undefined ? result.statusCode : null,
      error: 'error' in result ? result.error : null,
      next:
        step.kind === 'done'
          ? { state: 'succeeded', nextAttempt: attempt, nextAttemptAt: null, handoffPending: false }
          : step.kind === 'retry'
            ? { state: 'pending', nextAttempt: step.attempt, nextAttemptAt: step.dueAt, handoffPending: true }
            : { state: 'failed', nextAttempt: attempt, nextAttemptAt: null, handoffPending: true },
    };
    const advanced = await this.durably(() => this.recorder.add(record), 'record attempt');
    if (!advanced) {
      this.options.logger.info({ deliveryId: work.deliveryId, attempt }, 'attempt made twice; the other one moved the delivery on');
      return;
    }
    if (result.outcome !== 'succeeded') {
      this.options.logger.debug(
        { deliveryId: work.deliveryId, eventId: work.eventId, attempt, outcome: result.outcome, error: record.error },
        'attempt failed',
      );
    }
    if (step.kind !== 'done') await this.handOff(work, step, context.original, result);
  }

  private async send(work: DeliveryWork): Promise<AttemptResult> {
    let secret: string;
    try {
      secret = this.secretOf(work);
    } catch (error) {
      // Never send unsigned: a secret that cannot be decrypted (wrong key) fails the attempt.
      this.options.logger.error({ err: error, endpointId: work.endpointId }, 'cannot decrypt the endpoint secret');
      return { outcome: 'failed', error: 'internal: endpoint secret unavailable', startedAt: new Date(), durationMs: 0 };
    }
    return this.options.sender.send({
      url: work.endpointUrl,
      eventType: work.eventType,
      eventId: work.eventId,
      secret,
      body: work.payload,
    });
  }

  private secretOf(work: DeliveryWork): string {
    const cached = this.secretCache.get(work.endpointId);
    if (cached && cached.sealed.equals(work.secretCiphertext)) return cached.secret;
    const secret = this.options.secrets.open(work.secretCiphertext, work.endpointId);
    if (this.secretCache.size >= 10_000) this.secretCache.clear();
    this.secretCache.set(work.endpointId, { sealed: work.secretCiphertext, secret });
    return secret;
  }

  /** Produces the next step to Kafka (acknowledged by the brokers), then notes it in Postgres. */
  private async handOff(
    work: DeliveryWork,
    step: Exclude<NextStep, { kind: 'done' }>,
    original: SourceRef | undefined,
    last: AttemptResult | undefined,
  ): Promise<void> {
    const common = {
      deliveryId: work.deliveryId,
      eventId: work.eventId,
      eventType: work.eventType,
      workspaceId: work.workspaceId,
      original,
    };
    if (step.kind === 'retry') {
      await this.durably(
        () =>
          this.options.producer.send(step.topic, {
            key: work.deliveryId,
            value: JSON.stringify({
              deliveryId: work.deliveryId,
              eventId: work.eventId,
              endpointId: work.endpointId,
              attempt: step.attempt,
              notBefore: step.dueAt.toISOString(),
            }),
            headers: scheduleHeaders({ ...common, attempt: step.attempt, notBefore: step.dueAt }),
          }),
        `produce to ${step.topic}`,
      );
    } else {
      await this.durably(
        () =>
          this.options.producer.send(deadLetterTopic, {
            key: work.deliveryId,
            value: JSON.stringify({
              deliveryId: work.deliveryId,
              eventId: work.eventId,
              endpointId: work.endpointId,
              workspaceId: work.workspaceId,
              event: work.eventType,
              attempts: maxAttempts,
              failedAt: new Date().toISOString(),
              lastOutcome: last?.outcome ?? null,
              lastStatusCode: last && 'statusCode' in last ? (last.statusCode ?? null) : null,
              lastError: last && 'error' in last ? last.error : null,
              payload: JSON.parse(work.payload.toString('utf8')) as unknown,
            }),
            headers: scheduleHeaders({ ...common, attempt: maxAttempts, notBefore: new Date() }),
          }),
        'produce dead letter',
      );
      this.options.metrics.dead.inc();
      this.options.logger.warn({ deliveryId: work.deliveryId, eventId: work.eventId, endpointId: work.endpointId }, 'delivery permanently failed');
    }
    await this.durably(() => this.handoffDone.add(work.deliveryId), 'note hand-off');
  }

  private durably<T>(step: () => Promise<T>, what: string): Promise<T> {
    return retryUntilDone(step, {
      signal: this.options.signal,
      onError: (error, attempt) => this.options.logger.warn({ err: error, attempt }, `${what} failed; retrying`),
    });
  }
}

function retryTopicFor(attempt: number): Extract<NextStep, { kind: 'retry' }>['topic'] {
  const step = nextStep(attempt - 1, false, new Date(0), [0, 0, 0, 0]);
  if (step.kind !== 'retry') throw new RangeError(`no delay topic for attempt ${attempt}`);
  return step.topic;
}
