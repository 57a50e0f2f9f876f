import type { Pool } from '@tws/common';

export type DeliveryState = 'pending' | 'succeeded' | 'failed' | 'cancelled';
export type AttemptOutcome = 'succeeded' | 'failed' | 'blocked';

/** Everything needed to decide about and make an attempt of one delivery. */
export interface DeliveryWork {
  deliveryId: string;
  state: DeliveryState;
  nextAttempt: number;
  nextAttemptAt: Date | null;
  handoffPending: boolean;
  /** Waiting in its endpoint's backlog (see BacklogStore): the drainer that holds the endpoint's lease attempts it. */
  parked: boolean;
  /** The endpoint has parked deliveries: a first attempt of it queues behind them (keeps event order). */
  endpointBacklog: boolean;
  endpointId: string;
  endpointUrl: string;
  endpointDeleted: boolean;
  secretCiphertext: Buffer;
  /** A rotated-out secret still in its overlap (also signs webhook-signature), or null. */
  previousSecret: { ciphertext: Buffer; expiresAt: Date } | null;
  eventId: string;
  eventType: string;
  taskId: string;
  workspaceId: string;
  payload: Buffer;
}

export interface IncomingEvent {
  id: string;
  workspaceId: string;
  type: string;
  taskId: string;
  payload: Buffer;
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

interface WorkRow {
  delivery_id: string;
  state: DeliveryState;
  next_attempt: number;
  next_attempt_at: Date | null;
  handoff_pending: boolean;
  parked: boolean;
  endpoint_backlog: boolean;
  endpoint_id: string;
  url: string;
  endpoint_deleted: boolean;
  secret_ciphertext: Buffer;
  previous_secret_ciphertext: Buffer | null;
  previous_secret_expires_at: Date | null;
  event_id: string;
  type: string;
  task_id: string;
  workspace_id: string;
  payload: Buffer;
}

/** Whether endpoint `e` has parked deliveries: one probe of a partial index that is usually empty. */
const backlogColumn = 'EXISTS (SELECT 1 FROM deliveries p WHERE p.endpoint_id = e.id AND p.parked)';

const workColumns = `
  d.id AS delivery_id, d.state, d.next_attempt, d.next_attempt_at, d.handoff_pending, d.parked,
  ${backlogColumn} AS endpoint_backlog, e.id AS endpoint_id, e.url, e.deleted_at IS NOT NULL AS endpoint_deleted, e.secret_ciphertext,
  e.previous_secret_ciphertext, e.previous_secret_expires_at, ev.id AS event_id, ev.type, ev.task_id, ev.workspace_id, ev.payload`;

const toWork = (row: WorkRow): DeliveryWork => ({
  deliveryId: row.delivery_id,
  state: row.state,
  nextAttempt: row.next_attempt,
  nextAttemptAt: row.next_attempt_at,
  handoffPending: row.handoff_pending,
  parked: row.parked,
  endpointBacklog: row.endpoint_backlog,
  endpointId: row.endpoint_id,
  endpointUrl: row.url,
  endpointDeleted: row.endpoint_deleted,
  secretCiphertext: row.secret_ciphertext,
  previousSecret:
    row.previous_secret_ciphertext && row.previous_secret_expires_at
      ? { ciphertext: row.previous_secret_ciphertext, expiresAt: row.previous_secret_expires_at }
      : null,
  eventId: row.event_id,
  eventType: row.type,
  taskId: row.task_id,
  workspaceId: row.workspace_id,
  payload: row.payload,
});

type FanOutRow = Omit<WorkRow, 'type' | 'task_id' | 'workspace_id' | 'payload'>;

/**
 * The fan-out in one statement: record the events, create the deliveries, return them.
 * - Deliveries go in in event-id order (one lock order for concurrent fan-outs), so created_at, which
 *   orders the delivery log, comes from the event's position in the batch (Kafka order), one
 *   microsecond apart, not from the insertion time.
 * - A delivery another owner already created (a redelivered message, or two owners during a
 *   rebalance) comes back from the conflict's no-op update, which sees it even when that owner
 *   committed after this statement began (DO NOTHING would skip it, and nobody might attempt it).
 * - Deliveries of an event this statement did not record first (it was known) are also read from
 *   the table: their endpoint may no longer be a target (deleted, or no longer subscribed).
 */
const fanOutStatement = `WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[]) WITH ORDINALITY
      AS i (id, workspace_id, type, task_id, payload, ord)
  ), firsts AS (
    SELECT DISTINCT ON (id) id, workspace_id, type, task_id, payload, ord FROM input ORDER BY id, ord
  ), recorded AS (
    -- Only events somebody subscribed to are kept (most workspaces have no endpoint).
    INSERT INTO events (id, workspace_id, type, task_id, payload)
    SELECT f.id, f.workspace_id, f.type, f.task_id, f.payload FROM firsts f
    WHERE EXISTS (
      SELECT 1 FROM endpoints e WHERE e.workspace_id = f.workspace_id AND e.deleted_at IS NULL AND e.disabled_at IS NULL AND f.type = ANY (e.events)
    )
    ON CONFLICT (id) DO NOTHING
    RETURNING id
  ), created AS (
    INSERT INTO deliveries (id, endpoint_id, event_id, created_at, updated_at)
    SELECT gen_random_uuid(), e.id, f.id, f.at, f.at
    FROM (SELECT id, workspace_id, type, statement_timestamp() + make_interval(secs => ord / 1e6) AS at FROM firsts) f
    JOIN endpoints e ON e.workspace_id = f.workspace_id AND e.deleted_at IS NULL AND e.disabled_at IS NULL AND f.type = ANY (e.events)
    ORDER BY f.id, e.created_at, e.id
    ON CONFLICT (event_id, endpoint_id) WHERE NOT is_redelivery DO UPDATE SET updated_at = deliveries.updated_at
    RETURNING id, endpoint_id, event_id, state, next_attempt, next_attempt_at, handoff_pending, parked
  ), known AS (
    SELECT d.id, d.endpoint_id, d.event_id, d.state, d.next_attempt, d.next_attempt_at, d.handoff_pending, d.parked
    FROM deliveries d
    WHERE d.event_id IN (SELECT id FROM firsts EXCEPT SELECT id FROM recorded) AND NOT d.is_redelivery
      AND d.id NOT IN (SELECT id FROM created)
  )
  SELECT d.id AS delivery_id, d.state, d.next_attempt, d.next_attempt_at, d.handoff_pending, d.parked,
         ${backlogColumn} AS endpoint_backlog, e.id AS endpoint_id, e.url, e.deleted_at IS NOT NULL AS endpoint_deleted, e.secret_ciphertext,
         e.previous_secret_ciphertext, e.previous_secret_expires_at, d.event_id
  FROM (SELECT * FROM created UNION ALL SELECT * FROM known) d
  JOIN firsts f ON f.id = d.event_id
  JOIN endpoints e ON e.id = d.endpoint_id
  ORDER BY f.ord, e.created_at, e.id`;

/**
 * Deliveries and the attempt log; batch-oriented so a Kafka batch costs a few round trips. The
 * statements are unnamed on purpose: a cached generic plan made while `deliveries` was small keeps
 * scanning it sequentially as it grows (seen in the bench: 36 M rows read in a minute), a custom
 * plan does not.
 */
export class DeliveryStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Records events and creates one delivery per (event, subscribed live endpoint of its workspace),
   * idempotently, and returns every original delivery of these events (new or already known, so a
   * redelivered Kafka message resumes where the last owner stopped), in input order of the events,
   * then endpoint order. One statement; the payloads stay in this process (the input's).
   */
  async fanOut(events: IncomingEvent[]): Promise<DeliveryWork[]> {
    if (events.length === 0) return [];
    const { rows } = await this.pool.query<FanOutRow>({
      text: fanOutStatement,
      values: [
        events.map((event) => event.id),
        events.map((event) => event.workspaceId),
        events.map((event) => event.type),
        events.map((event) => event.taskId),
        events.map((event) => event.payload),
      ],
    });
    const byId = new Map(events.map((event) => [event.id, event]));
    return rows.map((row) => {
      const event = byId.get(row.event_id);
      if (!event) throw new Error(`fan-out returned a delivery of an unknown event ${row.event_id}`);
      return toWork({ ...row, type: event.type, task_id: event.taskId, workspace_id: event.workspaceId, payload: event.payload });
    });
  }

  /** Current state of the given deliveries (for retry and redelivery messages). */
  async load(deliveryIds: string[]): Promise<Map<string, DeliveryWork>> {
    if (deliveryIds.length === 0) return new Map();
    const { rows } = await this.pool.query<WorkRow>({
      text: `SELECT ${workColumns}
       FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id JOIN events ev ON ev.id = d.event_id
       WHERE d.id = ANY ($1::uuid[])`,
      values: [deliveryIds],
    });
    return new Map(rows.map((row) => [row.delivery_id, toWork(row)]));
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
      `INSERT INTO deliveries (id, endpoint_id, event_id, redelivery_of, is_redelivery, next_attempt_at)
       SELECT $1, d.endpoint_id, d.event_id, d.id, true, clock_timestamp() FROM deliveries d WHERE d.id = $2 AND d.endpoint_id = $3
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
       INSERT INTO deliveries (id, endpoint_id, event_id, next_attempt_at) SELECT $6::uuid, $7::uuid, ev.id, clock_timestamp() FROM ev`,
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
