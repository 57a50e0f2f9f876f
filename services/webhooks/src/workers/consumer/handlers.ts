import type { Logger } from '@tws/common';
import type { DeliveryStore, DeliveryWork, IncomingEvent } from '../../store/deliveries.js';
import type { DeliveryPipeline } from '../../domain/delivery/pipeline.js';
import type { WebhookMetrics } from '../../metrics.js';
import { contextOfTraceparent, inSpan, isSaneRequestId, isSaneTraceparent, MicroBatcher, retryUntilDone, runWithRequestId, SpanKind } from '@tws/common';
import {
  attemptOfTopic,
  notBeforeOf,
  originalOf,
  parseScheduledAttempt,
  parseTaskEvent,
  redeliveryTopic,
  requestIdOfMessage,
  traceparentOfMessage,
  type MessageHeaders,
} from '@tws/contracts';
import type { Acceptance, IncomingMessage, MessageHandler } from './runner.js';

interface HandlerDeps {
  store: DeliveryStore;
  pipeline: DeliveryPipeline;
  metrics: WebhookMetrics;
  logger: Logger;
  maxPending: number;
  signal: AbortSignal;
  /** Events were queued for the batched fan-out (workers/fanout-expander.ts): start on them now. */
  onQueued?: (() => void) | undefined;
}

const settledNow = Promise.resolve();

/** The request id and trace context a message's deliveries run under, read once per message. */
interface MessageScope {
  requestId: string | undefined;
  /** The message's `traceparent` when sane (a batched fan-out keeps it with its cursor). */
  traceparent: string | undefined;
}

const scopeOf = (requestId: string | null | undefined, traceparent: string | null | undefined): MessageScope => ({
  requestId: isSaneRequestId(requestId) ? requestId : undefined,
  traceparent: isSaneTraceparent(traceparent) ? traceparent : undefined,
});

const scopeOfMessage = (headers: MessageHeaders | undefined): MessageScope => scopeOf(requestIdOfMessage(headers), traceparentOfMessage(headers));

/** What a message's CONSUMER span tells besides its topic: the event it carries and how many deliveries it runs. */
export interface ProcessedMessage {
  eventId: string;
  deliveries: number;
}

/**
 * Runs the processing of a message's deliveries under the id of the request that caused its event
 * (the message's `request-id` header, when sane), so every line logged for them carries that
 * `reqId`; and, when the message carries a sane `traceparent` (tracing on at the producer), in one
 * CONSUMER span that is its child, so each delivery's attempt span joins the trace of the request
 * as a child of that one span (one span per message, as the messaging conventions have it).
 */
function inScope<T>(scope: MessageScope, topic: string, message: ProcessedMessage, run: () => Promise<T>): Promise<T> {
  const { requestId, traceparent } = scope;
  const underRequest = requestId !== undefined ? () => runWithRequestId(requestId, run) : run;
  if (traceparent === undefined) return underRequest();
  const attributes = {
    'messaging.system': 'kafka',
    'messaging.operation.type': 'process',
    'messaging.destination.name': topic,
    'messaging.message.id': message.eventId,
    'tws.webhook.deliveries': message.deliveries,
  };
  // The remote parent is made here, once per message that runs deliveries: most events have none.
  return inSpan(`${topic} process`, { kind: SpanKind.CONSUMER, parent: contextOfTraceparent(traceparent), attributes }, underRequest);
}

/** inScope with the request id and trace context given (a batched fan-out keeps them with its cursor). */
export function underRequest<T>(
  requestId: string | null | undefined,
  traceparent: string | null | undefined,
  topic: string,
  message: ProcessedMessage,
  run: () => Promise<T>,
): Promise<T> {
  return inScope(scopeOf(requestId, traceparent), topic, message, run);
}

function durably<T>(deps: HandlerDeps, step: () => Promise<T>, what: string): Promise<T> {
  return retryUntilDone(step, {
    signal: deps.signal,
    onError: (error, attempt) => deps.logger.warn({ err: error, attempt }, `${what} failed; retrying`),
  });
}

/**
 * `task-events.v1`: fan each event out to the subscribed endpoints of its workspace (one delivery
 * per endpoint, created idempotently) and make attempt 1 of each at once. A message is done when
 * every one of its deliveries succeeded or has its retry safely on a delay topic.
 */
export class TaskEventHandler implements MessageHandler {
  /** Chunks accepted at about the same time (one per partition) fan out in one pair of statements. */
  private readonly fanOuts: MicroBatcher<IncomingEvent[], DeliveryWork[]>;

  constructor(private readonly deps: HandlerDeps) {
    this.fanOuts = new MicroBatcher((chunks) => fanOutTogether(deps, chunks), { maxItems: 16, maxDelayMs: 1 });
  }

  saturated(): boolean {
    return this.deps.pipeline.inFlight >= this.deps.maxPending;
  }

  async accept(messages: IncomingMessage[]): Promise<Acceptance> {
    const parsed = messages.map(({ topic, partition, message }) => {
      const event = parseTaskEvent(message.value, message.headers);
      if (typeof event === 'string') {
        this.deps.metrics.invalidMessages.inc({ topic });
        this.deps.logger.error({ topic, partition, offset: message.offset, problem: event }, 'skipping an invalid task event');
        return undefined;
      }
      return event;
    });
    const scopes = parsed.map((event, index) => (event ? scopeOfMessage(messages[index]?.message.headers) : undefined));
    const events = parsed.flatMap((event, index): IncomingEvent[] => {
      const scope = scopes[index];
      return event && scope ? [{ ...event, requestId: scope.requestId, traceparent: scope.traceparent }] : [];
    });
    const work = events.length === 0 ? [] : await durably(this.deps, () => this.fanOuts.add(events), 'fan-out');
    const byEvent = new Map<string, DeliveryWork[]>();
    for (const item of work) {
      const list = byEvent.get(item.eventId);
      if (list) list.push(item);
      else byEvent.set(item.eventId, [item]);
    }
    const settled = messages.map(({ topic, partition, message }, index) => {
      const event = parsed[index];
      const scope = scopes[index];
      if (!event || !scope) return settledNow;
      const deliveries = byEvent.get(event.id) ?? [];
      // The same event twice in one chunk: the first message carries its deliveries.
      byEvent.delete(event.id);
      if (deliveries.length === 0) return settledNow;
      const original = { topic, partition, offset: message.offset };
      const eventTimestampMs = Number(message.timestamp);
      return inScope(scope, topic, { eventId: event.id, deliveries: deliveries.length }, () =>
        Promise.all(deliveries.map((delivery) => this.deps.pipeline.process(delivery, 1, { original, ordered: true, eventTimestampMs }))),
      ).then(() => undefined);
    });
    return { settled };
  }
}

/** One fan-out for several chunks; each chunk gets the deliveries of its events (an event id once overall). */
async function fanOutTogether(deps: HandlerDeps, chunks: IncomingEvent[][]): Promise<DeliveryWork[][]> {
  const { work, queued } = await deps.store.fanOut(chunks.flat());
  // Recorded with a fan-out cursor: the message is done, the expander creates the deliveries.
  if (queued.length > 0) deps.onQueued?.();
  const byEvent = new Map<string, DeliveryWork[]>();
  for (const item of work) {
    const list = byEvent.get(item.eventId);
    if (list) list.push(item);
    else byEvent.set(item.eventId, [item]);
  }
  return chunks.map((events) =>
    events.flatMap((event) => {
      const deliveries = byEvent.get(event.id) ?? [];
      byEvent.delete(event.id);
      return deliveries;
    }),
  );
}

/**
 * The delay topics (`webhooks.retry.*`) and the redelivery topic: make attempt n of a delivery
 * once its time has come. Messages of one delay topic arrive in due order, so the first one not
 * due yet pauses its partition until then; nothing sleeps while holding other work.
 */
export class ScheduledAttemptHandler implements MessageHandler {
  constructor(private readonly deps: HandlerDeps) {}

  saturated(): boolean {
    return this.deps.pipeline.inFlight >= this.deps.maxPending;
  }

  async accept(messages: IncomingMessage[]): Promise<Acceptance> {
    const now = Date.now();
    const due: Array<{ incoming: IncomingMessage; deliveryId: string; attempt: number } | undefined> = [];
    let pauseUntil: number | undefined;
    for (const incoming of messages) {
      const { topic, message } = incoming;
      const scheduled = parseScheduledAttempt(message.value);
      const expectedAttempt = topic === redeliveryTopic ? 1 : attemptOfTopic(topic);
      if (typeof scheduled === 'string' || scheduled.attempt !== expectedAttempt) {
        this.deps.metrics.invalidMessages.inc({ topic });
        this.deps.logger.error(
          { topic, offset: message.offset, problem: typeof scheduled === 'string' ? scheduled : 'attempt does not match the topic' },
          'skipping an invalid scheduled attempt',
        );
        due.push(undefined);
        continue;
      }
      const notBefore = Date.parse(notBeforeOf(message.headers) ?? scheduled.notBefore);
      if (notBefore > now) {
        pauseUntil = notBefore;
        break;
      }
      due.push({ incoming, deliveryId: scheduled.deliveryId, attempt: scheduled.attempt });
    }
    const ids = due.flatMap((item) => (item ? [item.deliveryId] : []));
    const work = await durably(this.deps, () => this.deps.store.load(ids), 'load deliveries');
    const settled = due.map((item) => {
      if (!item) return settledNow;
      const delivery = work.get(item.deliveryId);
      if (!delivery) return settledNow;
      const { headers } = item.incoming.message;
      return inScope(scopeOfMessage(headers), item.incoming.topic, { eventId: delivery.eventId, deliveries: 1 }, () =>
        this.deps.pipeline.process(delivery, item.attempt, { original: originalOf(headers) }),
      );
    });
    return pauseUntil === undefined ? { settled } : { settled, pauseUntil };
  }
}
