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
  /**
   * Parked deliveries are ahead of this one: of its task to its endpoint (the fan-outs' answer; of its
   * endpoint for a redelivered message's known deliveries). A first attempt queues behind them (keeps
   * event order). Always false for work loaded by id (`DeliveryStore.load`): never such a first attempt.
   */
  backlogAhead: boolean;
  /** When the statement that answered `backlogAhead` was sent (ms): a park committed since is not in its answer. */
  checkedAt: number;
  /** Created parked by the fan-out (its task had a backlog at the endpoint then): the backlog's drainer attempts it. */
  parkedAtFanOut: boolean;
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
  /** The request that caused the event and its trace context (kept with a batched fan-out's cursor). */
  requestId?: string | undefined;
  traceparent?: string | undefined;
}

export interface WorkRow {
  delivery_id: string;
  state: DeliveryState;
  next_attempt: number;
  next_attempt_at: Date | null;
  handoff_pending: boolean;
  parked: boolean;
  backlog_ahead: boolean;
  /** Only the fan-out's rows: created by this statement, parked. */
  parked_at_fan_out?: boolean;
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

/**
 * Whether endpoint `e` has parked deliveries: one probe of the partial index deliveries_parked_idx
 * (endpoint_id, created_at, id) WHERE parked. Not `EXISTS (…)`: the planner drops an EXISTS
 * subquery's ORDER BY and LIMIT, and once the statistics count many parked rows (an endpoint with a
 * backlog, the moment it matters) it expects a sequential scan to meet one early; the parked rows are
 * the newest, so each probe read the whole table (500 rows of a fan-out: 1.9 M buffers, 17 s, and the
 * pipeline fell behind). A scalar subquery in the index's order with LIMIT 1 keeps the index. (Not
 * `created_at DESC`: deliveries_endpoint_recent_idx has that order, and the planner may then walk an
 * endpoint's whole history for a parked row.) A drained backlog leaves its entries dead in the index
 * until vacuum, and the probe walks them: run it once per endpoint (backlogsCte), not per delivery.
 */
export const backlogColumn =
  '((SELECT true FROM deliveries p WHERE p.endpoint_id = e.id AND p.parked ORDER BY p.created_at, p.id LIMIT 1) IS NOT NULL)';

/**
 * The CTE `backlogs (id, endpoint_backlog)` (or `name`): `backlogColumn` once per endpoint that the subquery
 * `endpointIds` yields, for a statement to join its delivery rows to. Once per delivery row, a
 * fan-out of 96 events to 4 endpoints probed 384 times, each reading ~117 index pages of entries a
 * drained backlog had left dead: 45,000 buffers, 51 of its 84 ms (bench, auto_explain).
 * MATERIALIZED: inlined, the planner could pull the probe back into every row of the join.
 */
export const backlogsCte = (endpointIds: string, name = 'backlogs'): string =>
  `${name} AS MATERIALIZED (SELECT e.id, ${backlogColumn} AS endpoint_backlog FROM endpoints e WHERE e.id IN (${endpointIds}))`;

/**
 * Whether the task keyed `taskKey` (migration 019) has parked deliveries to endpoint `endpoint` (SQL
 * expressions): one probe of deliveries_parked_task_idx (migration 020), whose equal keys are stored
 * once, so the entries a drained backlog leaves dead until vacuum cost it a page, not a walk. The fan-outs
 * ask this per endpoint and task of their events (with `unkeyedBacklogColumn` per endpoint): a first
 * attempt queues behind its own task's parked deliveries only, so an endpoint under steady load leaves
 * its backlog task by task, as the drainer reaches each task's last parked delivery.
 */
export const taskBacklogColumn = (endpoint: string, taskKey: string): string =>
  `((SELECT true FROM deliveries p WHERE p.endpoint_id = ${endpoint} AND p.task_key = ${taskKey} AND p.parked LIMIT 1) IS NOT NULL)`;

/**
 * Whether endpoint `endpoint` has parked deliveries without a task key (parked before migration 019,
 * or by an older replica during a rolling upgrade): every first attempt to it queues behind those, as
 * behind a whole backlog before. Through the same index (`task_key IS NULL`); none once they drained.
 */
export const unkeyedBacklogColumn = (endpoint: string): string =>
  `((SELECT true FROM deliveries pn WHERE pn.endpoint_id = ${endpoint} AND pn.task_key IS NULL AND pn.parked LIMIT 1) IS NOT NULL)`;

/** A delivery's work columns, for work that is never a first attempt queued in event order (no backlog ahead); the statement joins `deliveries d`, `endpoints e` and `events ev`. */
export const workColumns = `
  d.id AS delivery_id, d.state, d.next_attempt, d.next_attempt_at, d.handoff_pending, d.parked,
  false AS backlog_ahead, e.id AS endpoint_id, e.url, e.deleted_at IS NOT NULL AS endpoint_deleted, e.secret_ciphertext,
  e.previous_secret_ciphertext, e.previous_secret_expires_at, ev.id AS event_id, ev.type, ev.task_id, ev.workspace_id, ev.payload`;

export const toWork = (row: WorkRow, checkedAt: number): DeliveryWork => ({
  deliveryId: row.delivery_id,
  state: row.state,
  nextAttempt: row.next_attempt,
  nextAttemptAt: row.next_attempt_at,
  handoffPending: row.handoff_pending,
  parked: row.parked,
  backlogAhead: row.backlog_ahead,
  checkedAt,
  parkedAtFanOut: row.parked_at_fan_out === true,
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
