import type { Pool } from '@tws/common';
import { taskBacklogColumn, toWork, unkeyedBacklogColumn, type DeliveryWork, type WorkRow } from './delivery-work.js';
import { shardOf, taskKeyOf } from './backlog.js';
import { ShardedLeases, type LeaseKey } from './sharded-leases.js';

/** Shards of a fan-out: endpoint ids by their first hex digit (random UUIDs spread evenly). */
export const fanOutShards = 16;

/** The endpoint id range of a shard: [lower, upper), upper null for the last. */
export function shardBounds(shard: number): { lower: string; upper: string | null } {
  const bound = (digit: number) => `${digit.toString(16)}0000000-0000-0000-0000-000000000000`;
  return { lower: bound(shard), upper: shard + 1 < fanOutShards ? bound(shard + 1) : null };
}

/** A (workspace, shard) whose fan-outs one replica expands at a time. */
export interface FanOutKey {
  workspaceId: string;
  shard: number;
}

const toLeaseKey = ({ workspaceId, shard }: FanOutKey): LeaseKey => ({ id: workspaceId, shard });

/** One shard of an event whose deliveries are created in batches (migration 009), with its durable cursor. */
export interface QueuedFanOut {
  eventId: string;
  workspaceId: string;
  shard: number;
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

/** A walked endpoint: the work row's endpoint and delivery columns, and where the walk stands. */
type BatchRow = {
  last_endpoint: string | null;
  walked: string;
  delivery_id: string | null;
} & Pick<
  WorkRow,
  | 'state'
  | 'next_attempt'
  | 'next_attempt_at'
  | 'handoff_pending'
  | 'parked'
  | 'backlog_ahead'
  | 'endpoint_id'
  | 'url'
  | 'endpoint_deleted'
  | 'secret_ciphertext'
  | 'previous_secret_ciphertext'
  | 'previous_secret_expires_at'
>;

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
    WHERE e.workspace_id = $1 AND e.id >= $6::uuid AND ($7::uuid IS NULL OR e.id < $7::uuid) AND ($3::uuid IS NULL OR e.id > $3::uuid)
    ORDER BY e.id LIMIT $4
  ), created AS (
    INSERT INTO deliveries (id, endpoint_id, event_id, created_at, updated_at, backlog_shard, task_key)
    SELECT gen_random_uuid(), b.id, $5, clock_timestamp(), clock_timestamp(), ${shardOf('$8::text')}, ${taskKeyOf('$8::text')} FROM batch b WHERE b.target
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
         (${unkeyedBacklogColumn('e.id')} OR ${taskBacklogColumn('e.id', taskKeyOf('$8::text'))}) AS backlog_ahead, e.id AS endpoint_id, e.url, e.deleted_at IS NOT NULL AS endpoint_deleted,
         e.secret_ciphertext, e.previous_secret_ciphertext, e.previous_secret_expires_at
  FROM walk w
  LEFT JOIN (SELECT * FROM created UNION ALL SELECT * FROM known) d ON true
  LEFT JOIN endpoints e ON e.id = d.endpoint_id
  ORDER BY d.endpoint_id`;

/** Fan-out cursors and the per-workspace leases of the replicas that expand them. */
export class FanOutStore {
  private readonly leases: ShardedLeases;

  constructor(private readonly pool: Pool) {
    this.leases = new ShardedLeases(pool, 'fanout_leases');
  }

  /**
   * (Workspace, shard) pairs with fan-outs queued and no live lease (at most `limit`, oldest fan-out
   * first); the table holds only unfinished fan-outs.
   */
  async free(limit = 200): Promise<FanOutKey[]> {
    const { rows } = await this.pool.query<{ workspace_id: string; shard: number }>({
      text: `SELECT q.workspace_id, q.shard
       FROM (SELECT workspace_id, shard, min(seq) AS first FROM fanouts GROUP BY workspace_id, shard) q
       LEFT JOIN fanout_leases l ON l.workspace_id = q.workspace_id AND l.shard = q.shard
       WHERE l.owner IS NULL OR l.expires_at < clock_timestamp()
       ORDER BY q.first LIMIT $1`,
      values: [limit],
    });
    return rows.map((row) => ({ workspaceId: row.workspace_id, shard: row.shard }));
  }

  /** Takes or renews the lease of these (workspace, shard) pairs for `owner`; returns the ones it holds. */
  async lease(owner: string, keys: FanOutKey[], leaseMs: number): Promise<FanOutKey[]> {
    const held = await this.leases.lease(owner, keys.map(toLeaseKey), leaseMs);
    return held.map(({ id, shard }) => ({ workspaceId: id, shard }));
  }

  async release(owner: string, keys: FanOutKey[]): Promise<void> {
    await this.leases.release(owner, keys.map(toLeaseKey));
  }

  /** The next fan-out of the workspace's shard after `afterSeq` (event order), with its event. */
  async next({ workspaceId, shard }: FanOutKey, afterSeq: string | null): Promise<QueuedFanOut | undefined> {
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
       WHERE q.workspace_id = $1 AND q.shard = $3 AND ($2::bigint IS NULL OR q.seq > $2::bigint)
       ORDER BY q.seq LIMIT 1`,
      values: [workspaceId, afterSeq, shard],
    });
    const row = rows[0];
    if (!row) return undefined;
    return {
      eventId: row.event_id,
      workspaceId,
      shard,
      seq: row.seq,
      type: row.type,
      taskId: row.task_id,
      payload: row.payload,
      afterEndpoint: row.after_endpoint,
      requestId: row.request_id,
      traceparent: row.traceparent,
    };
  }

  /** Creates (or finds again) the deliveries of the shard's next `limit` endpoints after `after`. */
  async expand(fanOut: QueuedFanOut, after: string | null, limit: number): Promise<FanOutBatch> {
    const { lower, upper } = shardBounds(fanOut.shard);
    const checkedAt = Date.now();
    const { rows } = await this.pool.query<BatchRow>({
      text: expandStatement,
      values: [fanOut.workspaceId, fanOut.type, after, limit, fanOut.eventId, lower, upper, fanOut.taskId],
    });
    const first = rows[0];
    const work: DeliveryWork[] = [];
    for (const row of rows) {
      if (row.delivery_id === null) continue;
      work.push(
        toWork({ ...row, delivery_id: row.delivery_id, event_id: fanOut.eventId, type: fanOut.type, task_id: fanOut.taskId, workspace_id: fanOut.workspaceId, payload: fanOut.payload }, checkedAt),
      );
    }
    return { work, lastEndpoint: first?.last_endpoint ?? null, walked: Number(first?.walked ?? 0) };
  }

  /** Every delivery of the shard up to `endpointId` is finished: a new owner resumes after it. */
  async advance(fanOut: QueuedFanOut, endpointId: string): Promise<void> {
    await this.pool.query({
      text: `UPDATE fanouts SET after_endpoint = $3 WHERE event_id = $1 AND shard = $2
       AND (after_endpoint IS NULL OR after_endpoint < $3::uuid)`,
      values: [fanOut.eventId, fanOut.shard, endpointId],
    });
  }

  /** The fan-out's shard is finished. */
  async finish(fanOut: QueuedFanOut): Promise<void> {
    await this.pool.query({ text: 'DELETE FROM fanouts WHERE event_id = $1 AND shard = $2', values: [fanOut.eventId, fanOut.shard] });
  }
}
