import type { Pool } from '@tws/common';
import { backlogColumn, toWork, type DeliveryState, type DeliveryWork } from './delivery-work.js';

/** An event whose deliveries are created in batches (migration 009), with its durable cursor. */
export interface QueuedFanOut {
  eventId: string;
  workspaceId: string;
  seq: string;
  type: string;
  taskId: string;
  payload: Buffer;
  /** Every delivery to an endpoint with an id up to this one is finished; null: none yet. */
  afterEndpoint: string | null;
  requestId: string | null;
  traceparent: string | null;
}

/** One batch: the deliveries to settle, and the last endpoint id it covered (null: the walk is over). */
export interface FanOutBatch {
  work: DeliveryWork[];
  lastEndpoint: string | null;
  /** Endpoints the batch walked (targets or not); fewer than the limit: this was the last batch. */
  walked: number;
}

interface BatchRow {
  last_endpoint: string | null;
  walked: string;
  delivery_id: string | null;
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
}

/**
 * One batch of a fan-out, idempotently: walks the workspace's endpoints after the cursor by id (all of
 * them, so a delivery created before its endpoint was deleted, disabled or unsubscribed is read back
 * and settled too), creates the deliveries of the targets (the unique index returns the ones a crashed
 * owner already created, via the conflict's no-op update) and returns them with what an attempt needs.
 * At most $4 rows are written: a small transaction, whatever the workspace's size.
 */
const expandStatement = `WITH batch AS (
    SELECT e.id, e.deleted_at IS NULL AND e.disabled_at IS NULL AND $2::text = ANY (e.events) AS target
    FROM endpoints e
    WHERE e.workspace_id = $1 AND ($3::uuid IS NULL OR e.id > $3::uuid)
    ORDER BY e.id LIMIT $4
  ), created AS (
    INSERT INTO deliveries (id, endpoint_id, event_id, created_at, updated_at)
    SELECT gen_random_uuid(), b.id, $5, clock_timestamp(), clock_timestamp() FROM batch b WHERE b.target
    ORDER BY b.id
    ON CONFLICT (event_id, endpoint_id) WHERE NOT is_redelivery DO UPDATE SET updated_at = deliveries.updated_at
    RETURNING id, endpoint_id, state, next_attempt, next_attempt_at, handoff_pending, parked
  ), known AS (
    SELECT d.id, d.endpoint_id, d.state, d.next_attempt, d.next_attempt_at, d.handoff_pending, d.parked
    FROM batch b JOIN deliveries d ON d.event_id = $5 AND d.endpoint_id = b.id AND NOT d.is_redelivery
    WHERE NOT b.target
  ), walk AS (
    SELECT (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last_endpoint, (SELECT count(*) FROM batch) AS walked
  )
  SELECT w.last_endpoint, w.walked, d.id AS delivery_id, d.state, d.next_attempt, d.next_attempt_at, d.handoff_pending, d.parked,
         ${backlogColumn} AS endpoint_backlog, e.id AS endpoint_id, e.url, e.deleted_at IS NOT NULL AS endpoint_deleted,
         e.secret_ciphertext, e.previous_secret_ciphertext, e.previous_secret_expires_at
  FROM walk w
  LEFT JOIN (SELECT * FROM created UNION ALL SELECT * FROM known) d ON true
  LEFT JOIN endpoints e ON e.id = d.endpoint_id
  ORDER BY d.endpoint_id`;

/** Fan-out cursors and the per-workspace leases of the replicas that expand them. */
export class FanOutStore {
  constructor(private readonly pool: Pool) {}

  /** Workspaces with fan-outs queued (at most `limit`); the table holds only unfinished ones. */
  async workspaces(limit = 100): Promise<string[]> {
    const { rows } = await this.pool.query<{ workspace_id: string }>({
      text: 'SELECT DISTINCT workspace_id FROM fanouts LIMIT $1',
      values: [limit],
    });
    return rows.map((row) => row.workspace_id);
  }

  /** Takes or renews the lease of these workspaces' fan-outs for `owner`; returns the ones it holds. */
  async lease(owner: string, workspaceIds: string[], leaseMs: number): Promise<string[]> {
    if (workspaceIds.length === 0) return [];
    const { rows } = await this.pool.query<{ workspace_id: string }>({
      text: `INSERT INTO fanout_leases (workspace_id, owner, expires_at)
       SELECT id, $2, clock_timestamp() + make_interval(secs => $3::float8 / 1000) FROM unnest($1::text[]) AS i (id)
       ON CONFLICT (workspace_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE fanout_leases.owner = excluded.owner OR fanout_leases.expires_at < clock_timestamp()
       RETURNING workspace_id`,
      values: [workspaceIds, owner, leaseMs],
    });
    return rows.map((row) => row.workspace_id);
  }

  async release(owner: string, workspaceIds: string[]): Promise<void> {
    if (workspaceIds.length === 0) return;
    await this.pool.query({
      text: 'DELETE FROM fanout_leases WHERE workspace_id = ANY ($1::text[]) AND owner = $2',
      values: [workspaceIds, owner],
    });
  }

  /** The workspace's next fan-out after `afterSeq` (event order), with its event. */
  async next(workspaceId: string, afterSeq: string | null): Promise<QueuedFanOut | undefined> {
    const { rows } = await this.pool.query<{
      event_id: string;
      seq: string;
      type: string;
      task_id: string;
      payload: Buffer;
      after_endpoint: string | null;
      request_id: string | null;
      traceparent: string | null;
    }>({
      text: `SELECT q.event_id, q.seq::text AS seq, ev.type, ev.task_id, ev.payload, q.after_endpoint, q.request_id, q.traceparent
       FROM fanouts q JOIN events ev ON ev.id = q.event_id
       WHERE q.workspace_id = $1 AND ($2::bigint IS NULL OR q.seq > $2::bigint)
       ORDER BY q.seq LIMIT 1`,
      values: [workspaceId, afterSeq],
    });
    const row = rows[0];
    if (!row) return undefined;
    return {
      eventId: row.event_id,
      workspaceId,
      seq: row.seq,
      type: row.type,
      taskId: row.task_id,
      payload: row.payload,
      afterEndpoint: row.after_endpoint,
      requestId: row.request_id,
      traceparent: row.traceparent,
    };
  }

  /** Creates (or finds again) the deliveries of the next `limit` endpoints after `after`. */
  async expand(fanOut: QueuedFanOut, after: string | null, limit: number): Promise<FanOutBatch> {
    const { rows } = await this.pool.query<BatchRow>({
      text: expandStatement,
      values: [fanOut.workspaceId, fanOut.type, after, limit, fanOut.eventId],
    });
    const first = rows[0];
    const work: DeliveryWork[] = [];
    for (const row of rows) {
      if (row.delivery_id === null) continue;
      work.push(
        toWork({ ...row, delivery_id: row.delivery_id, event_id: fanOut.eventId, type: fanOut.type, task_id: fanOut.taskId, workspace_id: fanOut.workspaceId, payload: fanOut.payload }),
      );
    }
    return { work, lastEndpoint: first?.last_endpoint ?? null, walked: Number(first?.walked ?? 0) };
  }

  /** Every delivery up to `endpointId` is finished: a new owner resumes after it. */
  async advance(eventId: string, endpointId: string): Promise<void> {
    await this.pool.query({
      text: 'UPDATE fanouts SET after_endpoint = $2 WHERE event_id = $1 AND (after_endpoint IS NULL OR after_endpoint < $2::uuid)',
      values: [eventId, endpointId],
    });
  }

  /** The whole fan-out is finished. */
  async finish(eventId: string): Promise<void> {
    await this.pool.query({ text: 'DELETE FROM fanouts WHERE event_id = $1', values: [eventId] });
  }
}
