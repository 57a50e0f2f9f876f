import { contextOfTraceparent, isSaneTraceparent, SpanKind, SpanStatusCode, startSpan, traceparentOf, type Logger, type Span } from '@tws/common';
import pg from 'pg';
import { taskEventMessage, taskEventSchema, type OutboundMessage } from '@tws/contracts';
import type { OutboxMetrics } from '../metrics.js';
import type { EventPublisher } from '../store/kafka-publisher.js';
import {
  deletePublishedOutboxRows,
  markOutboxPublished,
  markOutboxRejected,
  pendingOutboxRows,
  releaseRelayLock,
  takeRelayLock,
} from '../store/outbox.js';

export interface RelayOptions {
  /** Connection string for the relay's own session (it holds the advisory lock). */
  databaseUrl: string;
  schema: string;
  publisher: EventPublisher;
  topic: string;
  logger: Logger;
  metrics: OutboxMetrics;
  batchSize: number;
  /** Polling fallback when no notification arrives. */
  pollIntervalMs: number;
  /**
   * After a wake-up (a notification, or the polling fallback), how long to wait for more rows before
   * reading them: commits that land together then share one read, one Kafka request and one marking
   * instead of one cycle each.
   */
  lingerMs?: number;
  /** How often a standby replica tries to become the active relay. */
  standbyRetryMs: number;
  /** Published rows older than this are deleted. */
  retentionMs: number;
  /** Backoff after a failure: doubles from `initialBackoffMs` up to `maxBackoffMs`. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** How long `stop` waits for the batch in flight. */
  stopTimeoutMs?: number;
}

interface Session {
  client: pg.Client;
  lost: boolean;
  active: boolean;
}

/** Kafka did not acknowledge a batch (the rows stay unpublished and are retried). */
class PublishError extends Error {
  override readonly name = 'PublishError';
  constructor(cause: unknown) {
    super(`publishing to Kafka failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

const retentionEveryMs = 10 * 60_000;
const retentionChunk = 1000;

/**
 * Publishes outbox rows to Kafka in `seq` order and marks them published once the broker
 * acknowledged them.
 *
 * Exactly one replica is active: it holds a session-level Postgres advisory lock on a dedicated
 * connection, which also LISTENs for new rows (polling is the fallback). The others stand by and
 * try to take the lock every `standbyRetryMs`; the lock goes with the connection, so a crashed or
 * partitioned relay is replaced as soon as Postgres drops its session. Reading and marking rows go
 * through that same connection, so a relay that lost its lock cannot mark anything either.
 *
 * One task's events keep their order: its changes are serialised by the task row lock, so their
 * rows commit in `seq` order, and they share a Kafka key (partition). Delivery is at-least-once: a
 * relay that dies between the broker's acknowledgement and the marking leaves that batch to be
 * published again; consumers deduplicate on the event id.
 */
export class OutboxRelay {
  private stopping = false;
  private loop: Promise<void> | undefined;
  private session: Session | undefined;
  private wakeSleeper: (() => void) | undefined;
  private notified = false;
  private lastRetention = 0;
  constructor(private readonly options: RelayOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** Finishes the batch in flight, releases the lock and closes the session (bounded by stopTimeoutMs). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeSleeper?.();
    if (this.loop) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        this.loop.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), this.options.stopTimeoutMs ?? 8_000);
        }),
      ]);
      clearTimeout(timer);
      if (timedOut) this.options.logger.warn('outbox relay did not finish its batch in time; its rows stay unpublished');
    }
    await this.closeSession();
    await this.options.publisher.close();
  }

  private async run(): Promise<void> {
    const { logger } = this.options;
    const initialBackoff = this.options.initialBackoffMs ?? 500;
    const maxBackoff = this.options.maxBackoffMs ?? 10_000;
    let backoff = initialBackoff;
    let failures = 0;
    while (!this.stopping) {
      try {
        const session = await this.ensureSession();
        if (!session.active) {
          if (!(await this.tryBecomeActive(session))) {
            await this.sleep(this.options.standbyRetryMs, false);
            continue;
          }
        }
        const count = await this.publishBatch(session);
        if (failures > 0) logger.info({ failures }, 'outbox relay recovered');
        failures = 0;
        backoff = initialBackoff;
        if (count < this.options.batchSize) {
          await this.applyRetention(session);
          await this.sleep(this.options.pollIntervalMs, true);
          const linger = this.options.lingerMs ?? 0;
          if (linger > 0) await this.sleep(linger, false);
        }
      } catch (error) {
        failures += 1;
        // Log the first failure and then every tenth, not every retry of a long outage.
        if (failures === 1 || failures % 10 === 0) logger.warn({ err: error, failures, backoffMs: backoff }, 'outbox relay failed; retrying');
        // A database error may leave the session in doubt: start a fresh one (and contend for the
        // lock again). A Kafka error keeps the session and the active role.
        if (!(error instanceof PublishError)) await this.closeSession();
        await this.sleep(backoff, false);
        backoff = Math.min(backoff * 2, maxBackoff);
      }
    }
  }

  private async ensureSession(): Promise<Session> {
    if (this.session && !this.session.lost) return this.session;
    await this.closeSession();
    const client = new pg.Client({
      connectionString: this.options.databaseUrl,
      application_name: 'tasks-outbox-relay',
      options: `-c search_path=${this.options.schema},public`,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: 5_000,
      query_timeout: 30_000,
    });
    const session: Session = { client, lost: false, active: false };
    const lose = (): void => {
      if (session.lost) return;
      session.lost = true;
      if (session.active) this.options.logger.warn('outbox relay lost its database session; it gives up the active role');
      session.active = false;
      this.options.metrics.active.set(0);
      this.wakeSleeper?.();
    };
    client.on('error', lose);
    client.on('end', lose);
    client.on('notification', () => {
      this.notified = true;
      this.wakeSleeper?.();
    });
    this.session = session;
    try {
      await client.connect();
    } catch (error) {
      lose();
      throw error;
    }
    return session;
  }

  private async tryBecomeActive(session: Session): Promise<boolean> {
    if (!(await takeRelayLock(session.client))) return false;
    session.active = true;
    this.options.metrics.active.set(1);
    this.notified = true;
    this.options.logger.info('outbox relay active (advisory lock acquired)');
    return true;
  }

  /** Publishes the oldest unpublished rows; returns how many rows it handled. */
  private async publishBatch(session: Session): Promise<number> {
    const { client } = session;
    const rows = await pendingOutboxRows(client, this.options.batchSize);
    if (rows.length === 0) return 0;
    const messages: OutboundMessage[] = [];
    const spans: Span[] = [];
    const publishedIds: string[] = [];
    const rejected: Array<{ id: string; reason: string }> = [];
    for (const row of rows) {
      const parsed = taskEventSchema.safeParse(row.payload);
      if (!parsed.success || parsed.data.data.id !== row.aggregateid || parsed.data.event !== row.type) {
        const reason = parsed.success ? 'payload does not match the row' : parsed.error.message;
        rejected.push({ id: row.id, reason });
        continue;
      }
      publishedIds.push(row.id);
      // The record's span, a child of the call that made the change (its traceparent, migration 016);
      // the record carries the span's context. Rows of untraced changes get no span.
      const traceparent = isSaneTraceparent(row.traceparent) ? this.recordSpan(row.traceparent, row.id, spans) : null;
      // The zod output has the contract's field order; key = task id (= row.aggregateid, checked above).
      messages.push(taskEventMessage(parsed.data, row.workspace_id, row.request_id, traceparent));
    }
    try {
      await this.options.publisher.publish(this.options.topic, messages);
    } catch (error) {
      for (const span of spans) span.setStatus({ code: SpanStatusCode.ERROR, message: 'publishing to Kafka failed' }).end();
      throw new PublishError(error);
    }
    for (const span of spans) span.end();
    if (messages.length > 0) this.options.metrics.requests.inc();
    if (publishedIds.length > 0) {
      await markOutboxPublished(client, publishedIds);
      this.options.metrics.published.inc(publishedIds.length);
    }
    for (const { id, reason } of rejected) {
      this.options.logger.error({ eventId: id, reason }, 'outbox event failed validation; set aside, not published');
      await markOutboxRejected(client, id, reason);
      this.options.metrics.rejected.inc();
    }
    return rows.length;
  }

  /** Starts the PRODUCER span of one record under `parent`; returns the traceparent its headers carry. */
  private recordSpan(parent: string, eventId: string, spans: Span[]): string | null {
    const span = startSpan(`${this.options.topic} publish`, {
      kind: SpanKind.PRODUCER,
      parent: contextOfTraceparent(parent),
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'send',
        'messaging.destination.name': this.options.topic,
        'messaging.message.id': eventId,
      },
    });
    spans.push(span);
    // Tracing off here (no SDK): the no-op span carries the parent's context, passed on as it is.
    return traceparentOf(span);
  }

  /** Deletes published rows past the retention, a chunk at a time, at most every ten minutes. */
  private async applyRetention(session: Session): Promise<void> {
    if (Date.now() - this.lastRetention < retentionEveryMs) return;
    this.lastRetention = Date.now();
    let deleted = 0;
    for (;;) {
      const count = await deletePublishedOutboxRows(session.client, this.options.retentionMs, retentionChunk);
      deleted += count;
      if (count < retentionChunk || this.stopping) break;
    }
    if (deleted > 0) this.options.logger.info({ deleted }, 'outbox retention: published events deleted');
  }

  /** Waits `ms`; a stop (and a notification when `wakeOnNotify`) ends the wait early. */
  private sleep(ms: number, wakeOnNotify: boolean): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (wakeOnNotify && this.notified) {
      this.notified = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakeSleeper = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeSleeper = () => {
        if (this.stopping || this.session?.lost || (wakeOnNotify && this.notified)) {
          this.notified = false;
          done();
        }
      };
    });
  }

  private async closeSession(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (!session) return;
    if (session.active && !session.lost) {
      await releaseRelayLock(session.client).catch(() => undefined);
    }
    session.active = false;
    this.options.metrics.active.set(0);
    await session.client.end().catch(() => undefined);
  }
}
