import type { Logger, Pool } from '@tws/common';
import pg from 'pg';
import { Counter, Gauge, type Registry } from 'prom-client';
import { taskEventMessage, taskEventSchema, type OutboundMessage } from '@tws/contracts';
import type { EventPublisher } from './publisher.js';

export interface RelayOptions {
  /** Connection string for the relay's own session (it holds the advisory lock). */
  databaseUrl: string;
  schema: string;
  /** Pool for the metrics queries (any replica reports the backlog). */
  pool: Pool;
  publisher: EventPublisher;
  topic: string;
  logger: Logger;
  registry: Registry;
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

interface OutboxRow {
  id: string;
  aggregateid: string;
  type: string;
  payload: unknown;
  workspace_id: string;
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

/** Any value of the same 64-bit space as other advisory locks of this database; fixed for the relay. */
const relayLockKey = 'tasks:outbox-relay';
export const outboxChannel = 'tasks_outbox';
const retentionEveryMs = 10 * 60_000;

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
  private readonly published: Counter;
  private readonly requests: Counter;
  private readonly rejected: Counter;
  private readonly activeGauge: Gauge;

  constructor(private readonly options: RelayOptions) {
    const registers = [options.registry];
    this.published = new Counter({
      name: 'outbox_published_events_total',
      help: 'Outbox events published to Kafka and acknowledged by the broker.',
      registers,
    });
    this.requests = new Counter({
      name: 'outbox_publish_requests_total',
      help: 'Kafka requests of the outbox relay (events per request = published ÷ requests).',
      registers,
    });
    this.rejected = new Counter({
      name: 'outbox_rejected_events_total',
      help: 'Outbox events whose payload failed validation and were set aside (never published).',
      registers,
    });
    this.activeGauge = new Gauge({
      name: 'outbox_relay_active',
      help: '1 when this replica is the active outbox relay (holds the advisory lock), else 0.',
      registers,
    });
    registerBacklogMetrics(options.registry, options.pool, options.logger);
  }

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
      this.activeGauge.set(0);
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
    const { rows } = await session.client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [
      relayLockKey,
    ]);
    if (!rows[0]?.locked) return false;
    await session.client.query(`LISTEN ${outboxChannel}`);
    session.active = true;
    this.activeGauge.set(1);
    this.notified = true;
    this.options.logger.info('outbox relay active (advisory lock acquired)');
    return true;
  }

  /** Publishes the oldest unpublished rows; returns how many rows it handled. */
  private async publishBatch(session: Session): Promise<number> {
    const { client } = session;
    const { rows } = await client.query<OutboxRow>({
      name: 'outbox-pending',
      text: `SELECT id, aggregateid, type, payload, workspace_id FROM outbox
             WHERE published_at IS NULL AND rejected_at IS NULL ORDER BY seq LIMIT $1`,
      values: [this.options.batchSize],
    });
    if (rows.length === 0) return 0;
    const messages: OutboundMessage[] = [];
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
      // The zod output has the contract's field order; key = task id (= row.aggregateid, checked above).
      messages.push(taskEventMessage(parsed.data, row.workspace_id));
    }
    try {
      await this.options.publisher.publish(this.options.topic, messages);
    } catch (error) {
      throw new PublishError(error);
    }
    if (messages.length > 0) this.requests.inc();
    if (publishedIds.length > 0) {
      await client.query({
        name: 'outbox-mark-published',
        text: 'UPDATE outbox SET published_at = now() WHERE id = ANY($1::uuid[])',
        values: [publishedIds],
      });
      this.published.inc(publishedIds.length);
    }
    for (const { id, reason } of rejected) {
      this.options.logger.error({ eventId: id, reason }, 'outbox event failed validation; set aside, not published');
      await client.query('UPDATE outbox SET rejected_at = now(), rejected_reason = $2 WHERE id = $1', [id, reason]);
      this.rejected.inc();
    }
    return rows.length;
  }

  /** Deletes published rows past the retention, a chunk at a time, at most every ten minutes. */
  private async applyRetention(session: Session): Promise<void> {
    if (Date.now() - this.lastRetention < retentionEveryMs) return;
    this.lastRetention = Date.now();
    let deleted = 0;
    for (;;) {
      const { rowCount } = await session.client.query(
        `DELETE FROM outbox WHERE id IN (
           SELECT id FROM outbox WHERE published_at < now() - make_interval(secs => $1) LIMIT 1000)`,
        [this.options.retentionMs / 1000],
      );
      deleted += rowCount ?? 0;
      if ((rowCount ?? 0) < 1000 || this.stopping) break;
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
      await session.client.query('SELECT pg_advisory_unlock(hashtext($1))', [relayLockKey]).catch(() => undefined);
    }
    session.active = false;
    this.activeGauge.set(0);
    await session.client.end().catch(() => undefined);
  }
}

/**
 * `outbox_backlog_events` and `outbox_oldest_event_age_seconds`, read from the table at scrape time
 * (one query shared by both gauges), so every replica reports them, active or not.
 */
function registerBacklogMetrics(registry: Registry, pool: Pool, logger: Logger): void {
  let cached: { at: number; value: Promise<{ backlog: number; age: number } | null> } | undefined;
  const read = (): Promise<{ backlog: number; age: number } | null> => {
    if (cached && Date.now() - cached.at < 1_000) return cached.value;
    const value = pool
      .query<{ backlog: number; age: number }>(
        `SELECT count(*)::int AS backlog,
                coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age
         FROM outbox WHERE published_at IS NULL AND rejected_at IS NULL`,
      )
      .then((result) => result.rows[0] ?? null)
      .catch((error: unknown) => {
        logger.warn({ err: error }, 'could not read the outbox backlog for metrics');
        return null;
      });
    cached = { at: Date.now(), value };
    return value;
  };
  new Gauge({
    name: 'outbox_backlog_events',
    help: 'Outbox events not yet published to Kafka.',
    registers: [registry],
    async collect() {
      const result = await read();
      if (result) this.set(result.backlog);
    },
  });
  new Gauge({
    name: 'outbox_oldest_event_age_seconds',
    help: 'Age of the oldest outbox event not yet published (0 when none).',
    registers: [registry],
    async collect() {
      const result = await read();
      if (result) this.set(result.age);
    },
  });
}
