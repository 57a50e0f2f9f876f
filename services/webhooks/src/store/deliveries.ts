import type { Pool } from '@tws/common';
import { toWork, workColumns, type AttemptOutcome, type DeliveryState, type DeliveryWork, type IncomingEvent, type WorkRow } from './delivery-work.js';
import { fanOutStatement, fanOutValues, type FanOutRow } from './fan-out-statement.js';
import { shardOf, taskKeyOf } from './backlog.js';

export type { AttemptOutcome, DeliveryState, DeliveryWork, IncomingEvent } from './delivery-work.js';

/** What one fan-out statement did: deliveries to attempt now, and events queued for the batched fan-out. */
export interface FanOutResult {
  work: DeliveryWork[];
  queued: string[];
}

export interface LoggedAttempt {
  attempt: number;
  startedAt: Date;
  durationMs: number;
  outcome: AttemptOutcome;
  statusCode: number | null;
  error: string | null;
}

/** An attempt to record: what the delivery log shows, plus the delivery's state after it. */
export interface AttemptRecord extends LoggedAttempt {
  deliveryId: string;
  next: { state: DeliveryState; nextAttempt: number; nextAttemptAt: Date | null; handoffPending: boolean };
}

export interface DeliveryLogEntry {
  id: string;
  eventId: string;
  eventType: string;
  state: DeliveryState;
  createdAt: Date;
  redeliveryOf: string | null;
  nextAttempt: number;
  nextAttemptAt: Date | null;
  attempts: LoggedAttempt[];
}

/**
 * Deliveries and the attempt log; batch-oriented so a Kafka batch costs a few round trips. The
 * statements are unnamed on purpose: a cached generic plan made while `deliveries` was small keeps
 * scanning it sequentially as it grows (seen in the bench: 36 M rows read in a minute), a custom
 * plan does not.
 */
export class DeliveryStore {
  /**
   * @param batchSize events of a workspace with more live endpoints than this fan out in batches of
   * this many deliveries (WEBHOOK_FANOUT_BATCH_SIZE; workers/fanout-expander.ts).
   */
  constructor(
    private readonly pool: Pool,
    private readonly batchSize = 500,
  ) {}

  /**
   * Records events and creates one delivery per (event, subscribed live endpoint of its workspace),
   * idempotently, and returns every original delivery of these events (new or already known, so a
   * redelivered Kafka message resumes where the last owner stopped), in input order of the events,
   * then endpoint order. One statement; the payloads stay in this process (the input's). Events of a
   * workspace with more than `batchSize` live endpoints are only recorded, with a fan-out cursor (`queued`).
   */
  async fanOut(events: IncomingEvent[]): Promise<FanOutResult> {
    if (events.length === 0) return { work: [], queued: [] };
    const checkedAt = Date.now();
    const { rows } = await this.pool.query<FanOutRow>({
      // Prepared once per connection, so Postgres settles on a generic plan: it spent 2.6 ms of each
      // 9.6 ms call planning it (bench/HISTORY.md, session 10). Its result columns are all named, so no
      // migration can change the cached plan's result type.
      name: 'webhooks-fan-out',
      text: fanOutStatement,
      values: fanOutValues(events, this.batchSize),
    });
    const byId = new Map(events.map((event) => [event.id, event]));
    const work: DeliveryWork[] = [];
    const queued: string[] = [];
    for (const row of rows) {
      if (row.queued) {
        queued.push(row.event_id);
        continue;
      }
      const event = byId.get(row.event_id);
      if (!event) throw new Error(`fan-out returned a delivery of an unknown event ${row.event_id}`);
      work.push(toWork({ ...row, type: event.type, task_id: event.taskId, workspace_id: event.workspaceId, payload: event.payload }, checkedAt));
    }
    return { work, queued };
  }


  /**
   * Current state of the given deliveries: for scheduled attempts (retries, redeliveries) and the
   * backlog's drainer. None of those is a first attempt queued in event order (the drainer's are the
   * backlog itself), so no backlog is probed for them: `backlogAhead` is false. (The probe walked the
   * entries a drained backlog left dead in deliveries_parked_idx, once per endpoint of every batch.)
   */
  async load(deliveryIds: string[]): Promise<Map<string, DeliveryWork>> {
    if (deliveryIds.length === 0) return new Map();
    const checkedAt = Date.now();
    const { rows } = await this.pool.query<WorkRow>({
      text: `SELECT ${workColumns}
       FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id JOIN events ev ON ev.id = d.event_id
       WHERE d.id = ANY ($1::uuid[])`,
      values: [deliveryIds],
    });
    return new Map(rows.map((row) => [row.delivery_id, toWork(row, checkedAt)]));
  }

  /**
   * Logs attempts and moves each delivery on, but only if it still waits for exactly that attempt
   * (compare-and-set: a duplicate attempt after a crash or rebalance logs, but does not advance
   * twice). Returns, per record, whether this caller advanced the delivery.
   */
  async completeAttempts(records: AttemptRecord[]): Promise<boolean[]> {
    const { rows } = await this.pool.query<{ id: string; attempt: number }>({
      // One JSON parameter rather than eleven arrays: pg's array literal escaping costs more in this
      // process than JSON.stringify, and Postgres parses either about as fast.
      text: `WITH input AS (
         SELECT * FROM json_to_recordset($1::json)
           AS i (delivery_id uuid, attempt smallint, started_at timestamptz, duration_ms int, outcome text, status_code smallint,
                 error text, next_state text, next_attempt smallint, next_attempt_at timestamptz, handoff_pending boolean)
       ), logged AS (
         INSERT INTO attempts (delivery_id, attempt, started_at, duration_ms, outcome, status_code, error)
         SELECT delivery_id, attempt, started_at, duration_ms, outcome, status_code, error FROM input
       )
       UPDATE deliveries d
       SET state = i.next_state, next_attempt = i.next_attempt, next_attempt_at = i.next_attempt_at,
           handoff_pending = i.handoff_pending, parked = false, updated_at = clock_timestamp()
       FROM input i
       WHERE d.id = i.delivery_id AND d.state = 'pending' AND d.next_attempt = i.attempt
       RETURNING d.id, i.attempt`,
      values: [
        JSON.stringify(
          records.map((record) => ({
            delivery_id: record.deliveryId,
            attempt: record.attempt,
            started_at: record.startedAt,
            duration_ms: record.durationMs,
            outcome: record.outcome,
            status_code: record.statusCode,
            error: record.error,
            next_state: record.next.state,
            next_attempt: record.next.nextAttempt,
            next_attempt_at: record.next.nextAttemptAt,
            handoff_pending: record.next.handoffPending,
          })),
        ),
      ],
    });
    const advanced = new Set(rows.map((row) => `${row.id}/${row.attempt}`));
    const seen = new Set<string>();
    return records.map((record) => {
      const key = `${record.deliveryId}/${record.attempt}`;
      // Two records of the same attempt in one batch: only the first one counts as the advance.
      const first = !seen.has(key);
      seen.add(key);
      return first && advanced.has(key);
    });
  }

  /** The retry message or dead letter of these deliveries is acknowledged by Kafka. */
  async clearHandoff(deliveryIds: string[]): Promise<void> {
    await this.pool.query({
      text: 'UPDATE deliveries SET handoff_pending = false WHERE id = ANY ($1::uuid[]) AND handoff_pending',
      values: [deliveryIds],
    });
  }

  /** Stops deliveries whose endpoint is gone. */
  async cancel(deliveryIds: string[]): Promise<void> {
    await this.pool.query(
      `UPDATE deliveries SET state = 'cancelled', handoff_pending = false, parked = false, next_attempt_at = NULL, updated_at = clock_timestamp()
       WHERE id = ANY ($1::uuid[]) AND state = 'pending'`,
      [deliveryIds],
    );
  }

  /** A new attempt chain for a delivery of this endpoint: same event, attempt 1 due now. */
  async createRedelivery(input: { id: string; endpointId: string; deliveryId: string }): Promise<DeliveryLogEntry | undefined> {
    const { rows } = await this.pool.query<{ id: string }>(
      `INSERT INTO deliveries (id, endpoint_id, event_id, redelivery_of, is_redelivery, next_attempt_at, backlog_shard, task_key)
       SELECT $1, d.endpoint_id, d.event_id, d.id, true, clock_timestamp(), d.backlog_shard, d.task_key FROM deliveries d WHERE d.id = $2 AND d.endpoint_id = $3
       RETURNING id`,
      [input.id, input.deliveryId, input.endpointId],
    );
    if (rows.length === 0) return undefined;
    return (await this.logEntries([input.id]))[0];
  }

  /** The test ping: its event (type `ping`, task id = the endpoint id) and its one delivery, attempt 1 due now. */
  async createTestDelivery(input: { id: string; endpointId: string; event: IncomingEvent }): Promise<DeliveryLogEntry | undefined> {
    await this.pool.query(
      `WITH ev AS (INSERT INTO events (id, workspace_id, type, task_id, payload) VALUES ($1, $2, $3, $4, $5) RETURNING id)
       INSERT INTO deliveries (id, endpoint_id, event_id, next_attempt_at, backlog_shard, task_key)
       SELECT $6::uuid, $7::uuid, ev.id, clock_timestamp(), ${shardOf('$4::text')}, ${taskKeyOf('$4::text')} FROM ev`,
      [input.event.id, input.event.workspaceId, input.event.type, input.event.taskId, input.event.payload, input.id, input.endpointId],
    );
    return (await this.logEntries([input.id]))[0];
  }

  /** Recent deliveries of an endpoint, newest first; `after` is the id of the last one already seen. */
  async listForEndpoint(endpointId: string, limit: number, after: string | undefined): Promise<DeliveryLogEntry[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT d.id FROM deliveries d
       WHERE d.endpoint_id = $1
         AND ($3::uuid IS NULL OR (d.created_at, d.id) < (SELECT c.created_at, c.id FROM deliveries c WHERE c.id = $3 AND c.endpoint_id = $1))
       ORDER BY d.created_at DESC, d.id DESC
       LIMIT $2`,
      [endpointId, limit, after ?? null],
    );
    return this.logEntries(rows.map((row) => row.id));
  }

  /** Deliveries with their attempts, read in one statement so state and attempts agree. */
  private async logEntries(ids: string[]): Promise<DeliveryLogEntry[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query<{
      id: string;
      event_id: string;
      type: string;
      state: DeliveryState;
      created_at: Date;
      redelivery_of: string | null;
      next_attempt: number;
      next_attempt_at: Date | null;
      attempts: Array<{
        attempt: number;
        started_at: string;
        duration_ms: number;
        outcome: AttemptOutcome;
        status_code: number | null;
        error: string | null;
      }>;
    }>(
      `SELECT d.id, d.event_id, ev.type, d.state, d.created_at, d.redelivery_of, d.next_attempt, d.next_attempt_at,
              coalesce(a.attempts, '[]'::json) AS attempts
       FROM deliveries d
       JOIN events ev ON ev.id = d.event_id
       LEFT JOIN LATERAL (
         SELECT json_agg(json_build_object(
                  'attempt', t.attempt, 'started_at', t.started_at, 'duration_ms', t.duration_ms,
                  'outcome', t.outcome, 'status_code', t.status_code, 'error', t.error)
                ORDER BY t.started_at, t.id) AS attempts
         FROM attempts t WHERE t.delivery_id = d.id
       ) a ON true
       WHERE d.id = ANY ($1::uuid[])`,
      [ids],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.flatMap((id) => {
      const row = byId.get(id);
      if (!row) return [];
      return [
        {
          id: row.id,
          eventId: row.event_id,
          eventType: row.type,
          state: row.state,
          createdAt: row.created_at,
          redeliveryOf: row.redelivery_of,
          nextAttempt: row.next_attempt,
          nextAttemptAt: row.next_attempt_at,
          attempts: row.attempts.map((attempt) => ({
            attempt: attempt.attempt,
            startedAt: new Date(attempt.started_at),
            durationMs: attempt.duration_ms,
            outcome: attempt.outcome,
            statusCode: attempt.status_code,
            error: attempt.error,
          })),
        },
      ];
    });
  }
}
