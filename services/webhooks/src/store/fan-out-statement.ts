import { backlogColumn, type WorkRow } from './delivery-work.js';

export type FanOutRow = Omit<WorkRow, 'type' | 'task_id' | 'workspace_id' | 'payload'>;

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
export const fanOutStatement = `WITH input AS (
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
