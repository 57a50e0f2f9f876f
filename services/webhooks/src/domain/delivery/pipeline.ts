import type { Logger } from '@tws/common';
import type { BacklogStore } from '../../store/backlog.js';
import type { AttemptRecord, DeliveryStore, DeliveryWork } from '../../store/deliveries.js';
import type { WebhookMetrics } from '../../metrics.js';
import type { AttemptResult, WebhookSender } from '../../clients/sender.js';
import type { HandoffProducer } from '../../store/handoff-producer.js';
import { deadLetterMessage, deadLetterTopic, maxAttempts, scheduledAttemptMessage, type SourceRef } from '@tws/contracts';
import { nextStep, type NextStep } from '../retry/schedule.js';
import type { SecretBox } from '../../store/secret-box.js';
import { EndpointPace, type PaceTicket } from './endpoint-pace.js';
import { ParkedTasks } from './parked-tasks.js';
import { OpenedSecrets } from './opened-secrets.js';
import { tracedAttempt } from './attempt-span.js';
import { currentRequestId, currentTraceparent, KeyedSerializer, MicroBatcher, observeLatency, retryUntilDone, Semaphore } from '@tws/common';

export interface PipelineOptions {
  store: DeliveryStore;
  sender: WebhookSender;
  secrets: SecretBox;
  producer: HandoffProducer;
  metrics: WebhookMetrics;
  logger: Logger;
  retryDelaysMs: readonly number[];
  concurrency: number;
  /** Attempts in flight per workspace (its share of `concurrency`). */
  workspaceConcurrency: number;
  endpointConcurrency: number;
  /** Most deliveries one endpoint may hold in this replica (in flight + queued) before further ones are parked. */
  endpointQueueLimit: number;
  /** Longest expected wait in an endpoint's queue (at its pace) before further deliveries are parked. */
  endpointMaxQueueWaitMs: number;
  backlog: BacklogStore;
  /** Endpoints deleted (on any replica): no attempt to them starts. */
  isDeleted: (endpointId: string) => boolean;
  /** Told the outcome of every attempt that moved its delivery on (auto-disable). */
  onOutcome?: ((endpointId: string, ok: boolean) => void) | undefined;
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
  /** Taken from the endpoint's backlog by its drainer: attempted here, never parked again. */
  drained?: boolean;
}

/**
 * Makes attempts and moves deliveries through their states: attempt → log it (compare-and-set) →
 * hand the next step (retry message or dead letter) to Kafka → note the hand-off. The returned
 * promise settles when the source message of this attempt may be committed.
 *
 * Concurrency: a global limit, a per-workspace share of it, a per-endpoint limit (one slow endpoint
 * cannot take every slot), and a per (endpoint, task) serializer for first attempts. An endpoint holds
 * at most `endpointQueueLimit` deliveries here; beyond that (a hanging or slow endpoint) an attempt is
 * parked in the endpoint's backlog in Postgres, which is its durable hand-off: the source message is
 * done and the consumer fetches on. First attempts of an endpoint with a backlog queue behind it (order).
 */
export class DeliveryPipeline {
  private readonly global: Semaphore;
  private readonly perEndpoint = new Map<string, Semaphore>();
  private readonly perWorkspace = new Map<string, Semaphore>();
  /** Deliveries per endpoint and the pace of their attempts: how many more it may hold here. */
  private readonly pace: EndpointPace;
  /** Tasks this replica parked work of, per endpoint, and when (ms) the last park committed: see `mustPark`. */
  private readonly parkedHere = new ParkedTasks();
  private readonly parker: MicroBatcher<{ deliveryId: string; attempt: number }, boolean>;
  private readonly order = new KeyedSerializer();
  private readonly recorder: MicroBatcher<AttemptRecord, boolean>;
  private readonly handoffDone: MicroBatcher<string, undefined>;
  private pending = 0;
  private readonly secrets: OpenedSecrets;

  constructor(private readonly options: PipelineOptions) {
    this.global = new Semaphore(options.concurrency);
    this.secrets = new OpenedSecrets(options.secrets);
    options.metrics.countInFlight(() => this.pending);
    this.pace = new EndpointPace({
      concurrency: options.endpointConcurrency,
      queueLimit: options.endpointQueueLimit,
      maxQueueWaitMs: options.endpointMaxQueueWaitMs,
    });
    this.recorder = new MicroBatcher((records) => options.store.completeAttempts(records), { maxItems: 200, maxDelayMs: 2 });
    this.handoffDone = new MicroBatcher(
      async (ids) => {
        await options.store.clearHandoff(ids);
        return ids.map(() => undefined);
      },
      { maxItems: 500, maxDelayMs: 5 },
    );
    this.parker = new MicroBatcher(
      async (items) => {
        const parked = await options.backlog.park(items);
        return items.map((item) => parked.has(item.deliveryId));
      },
      { maxItems: 500, maxDelayMs: 2 },
    );
  }

  /** Room left for `endpointId` before its deliveries are parked. */
  freeSlots(endpointId: string): number {
    return this.pace.room(endpointId);
  }

  /**
   * The drainer saw which endpoints still have a backlog (in a query begun at `checkedAt`): this
   * replica stops queueing first attempts behind a backlog that is gone.
   */
  forgetParked(withBacklog: ReadonlySet<string>, checkedAt: number): void {
    this.parkedHere.forget(withBacklog, checkedAt);
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
      // Parked (by the fan-out, or meanwhile: a redelivered message): the lease holder of the endpoint's backlog attempts it.
      if (work.parked && !context.drained) {
        if (work.parkedAtFanOut) this.parkedNow(work);
        return;
      }
      if (!context.drained && this.mustPark(work, context)) {
        await this.park(work, attempt);
        return;
      }
      await this.attempt(work, attempt, context);
    } finally {
      this.pending -= 1;
    }
  }

  /**
   * Parked when the endpoint has no room here, or (a first attempt) when deliveries of its task to the
   * endpoint are parked ahead of it: as its fan-out read them, or parked here since that read was sent
   * (a park it could not see yet; one still committing counts as now).
   */
  private mustPark(work: DeliveryWork, context: AttemptContext): boolean {
    if (this.pace.room(work.endpointId) === 0) return true;
    return context.ordered === true && (work.backlogAhead || this.parkedHere.since(work.endpointId, work.taskId) >= work.checkedAt);
  }

  private async park(work: DeliveryWork, attempt: number): Promise<void> {
    const ended = this.parkedHere.parking(work.endpointId, work.taskId);
    try {
      const parked = await this.durably(() => this.parker.add({ deliveryId: work.deliveryId, attempt }), 'park delivery');
      if (parked) this.options.metrics.parked.inc(); // else moved on meanwhile (another owner attempted or cancelled it)
    } finally {
      ended();
    }
  }

  /** A delivery was created parked (committed): this replica queues its task's next first attempts behind it too. */
  private parkedNow(work: DeliveryWork): void {
    this.parkedHere.parked(work.endpointId, work.taskId, Date.now());
    this.options.metrics.parked.inc();
  }

  private async attempt(work: DeliveryWork, attempt: number, context: AttemptContext): Promise<void> {
    const ticket = this.pace.enter(work.endpointId);
    try {
      // Order holds for the requests only: the next event's attempt goes out once this one's response
      // is in, while this one is still being logged and handed off.
      const send = () => this.sendLimited(work, ticket, attempt);
      const result = await (context.ordered ? this.order.run(`${work.endpointId}/${work.taskId}`, send) : send());
      if (result === undefined) {
        // The endpoint was deleted while this waited: no request; its deliveries are cancelled.
        this.options.metrics.skippedDeleted.inc();
        await this.durably(() => this.options.store.cancel([work.deliveryId]), 'cancel delivery');
        return;
      }
      await this.settle(work, attempt, context, result);
    } finally {
      this.pace.leave(ticket);
    }
  }

  private workspaceLimit(workspaceId: string): Semaphore {
    let semaphore = this.perWorkspace.get(workspaceId);
    if (!semaphore) {
      semaphore = new Semaphore(this.options.workspaceConcurrency);
      this.perWorkspace.set(workspaceId, semaphore);
    }
    return semaphore;
  }

  private endpointLimit(endpointId: string): Semaphore {
    let semaphore = this.perEndpoint.get(endpointId);
    if (!semaphore) {
      // At the endpoint's pace; sendLimited sets it again whenever an attempt ends (the pace's only change).
      semaphore = new Semaphore(this.pace.concurrency(endpointId));
      this.perEndpoint.set(endpointId, semaphore);
    }
    return semaphore;
  }

  /**
   * The attempt under the endpoint's, the workspace's and the global limit (taken in that order);
   * undefined if the endpoint is deleted by then. One async frame for the three: a place free now is
   * taken without a promise (an attempt's frames live as long as its request, and outlive scavenges).
   */
  private async sendLimited(work: DeliveryWork, ticket: PaceTicket, attempt: number): Promise<AttemptResult | undefined> {
    const endpointLimit = this.endpointLimit(work.endpointId);
    if (!endpointLimit.tryAcquire()) await endpointLimit.acquire();
    // Looked up when entered (not before waiting for the endpoint): an idle semaphore is dropped from the map.
    const workspaceLimit = this.workspaceLimit(work.workspaceId);
    try {
      if (!workspaceLimit.tryAcquire()) await workspaceLimit.acquire();
      try {
        if (!this.global.tryAcquire()) await this.global.acquire();
        try {
          // Checked as the attempt starts: a DELETE on any replica stops attempts still queued here.
          if (this.options.isDeleted(work.endpointId)) return undefined;
          const ended = this.pace.started(ticket);
          try {
            return await tracedAttempt(work, attempt, () => this.send(work));
          } finally {
            ended();
          }
        } finally {
          this.global.release();
        }
      } finally {
        workspaceLimit.release();
        if (workspaceLimit.inUse === 0 && workspaceLimit.queued === 0) this.perWorkspace.delete(work.workspaceId);
      }
    } finally {
      // Its pace may have changed with this attempt: a slow start ends for the deliveries already
      // queued here too, not only for those that arrive later (a burst to a new endpoint).
      endpointLimit.setLimit(this.pace.concurrency(work.endpointId));
      endpointLimit.release();
      if (endpointLimit.inUse === 0 && endpointLimit.queued === 0) this.perEndpoint.delete(work.endpointId);
    }
  }

  /** Metrics, the attempt log (compare-and-set) and the hand-off of the next step. */
  private async settle(work: DeliveryWork, attempt: number, context: AttemptContext, result: AttemptResult): Promise<void> {
    const { metrics } = this.options;
    metrics.deliveries.inc({ result: result.outcome, attempt: String(attempt) });
    // In the event's consumer span (the attempt's parent): its sampled trace is the bucket's exemplar.
    observeLatency(metrics.duration, { result: result.outcome }, result.durationMs / 1000);
    if (result.outcome === 'blocked') {
      metrics.ssrfBlocked.inc({ stage: 'delivery' });
      // The address is for operators only; the delivery log says just that it is not allowed.
      this.options.logger.warn({ deliveryId: work.deliveryId, endpointId: work.endpointId, detail: result.detail }, 'attempt blocked by the SSRF guard');
    }
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
    this.options.onOutcome?.(work.endpointId, result.outcome === 'succeeded');
    this.options.logger.debug(
      { deliveryId: work.deliveryId, eventId: work.eventId, attempt, outcome: result.outcome, statusCode: record.statusCode, error: record.error },
      result.outcome === 'succeeded' ? 'attempt succeeded' : 'attempt failed',
    );
    if (step.kind !== 'done') await this.handOff(work, step, context.original, result);
  }

  private async send(work: DeliveryWork): Promise<AttemptResult> {
    let secrets: { secret: string; previous: string[] };
    try {
      secrets = this.secrets.of(work);
    } catch (error) {
      // Never send unsigned: a secret that cannot be decrypted (wrong key) fails the attempt.
      this.options.logger.error({ err: error, endpointId: work.endpointId }, 'cannot decrypt the endpoint secret');
      return { outcome: 'failed', error: 'internal: endpoint secret unavailable', startedAt: new Date(), durationMs: 0 };
    }
    return this.options.sender.send({
      endpointId: work.endpointId,
      url: work.endpointUrl,
      eventType: work.eventType,
      eventId: work.eventId,
      secret: secrets.secret,
      previousSecrets: secrets.previous,
      body: work.payload,
    });
  }

  /** Produces the next step to Kafka (acknowledged by the brokers), then notes it in Postgres. */
  private async handOff(
    work: DeliveryWork,
    step: Exclude<NextStep, { kind: 'done' }>,
    original: SourceRef | undefined,
    last: AttemptResult | undefined,
  ): Promise<void> {
    // The request that caused the event (handlers.ts runs each delivery under it) goes along for the
    // logs, and the trace context for the next attempt's spans.
    const context = { eventType: work.eventType, workspaceId: work.workspaceId, original, requestId: currentRequestId(), traceparent: currentTraceparent() };
    if (step.kind === 'retry') {
      await this.durably(
        () =>
          this.options.producer.send(
            step.topic,
            scheduledAttemptMessage(
              { deliveryId: work.deliveryId, eventId: work.eventId, endpointId: work.endpointId, attempt: step.attempt, notBefore: step.dueAt.toISOString() },
              context,
            ),
          ),
        `produce to ${step.topic}`,
      );
    } else {
      await this.durably(
        () =>
          this.options.producer.send(
            deadLetterTopic,
            deadLetterMessage(
              {
                deliveryId: work.deliveryId,
                eventId: work.eventId,
                endpointId: work.endpointId,
                workspaceId: work.workspaceId,
                event: work.eventType,
                attempts: maxAttempts,
                failedAt: new Date().toISOString(),
                lastOutcome: last?.outcome ?? null,
                lastStatusCode: last && 'statusCode' in last ? (last.statusCode ?? null) : null,
                lastError: last && 'error' in last ? (last.error ?? null) : null,
                payload: JSON.parse(work.payload.toString('utf8')) as unknown,
              },
              { original },
            ),
          ),
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
