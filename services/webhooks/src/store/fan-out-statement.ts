import { shardOf, taskKeyOf } from './backlog.js';
import { backlogsCte, taskBacklogColumn, unkeyedBacklogColumn, type IncomingEvent, type WorkRow } from './delivery-work.js';

/**
 * The statement's parameters for a batch of events. The payloads travel as one binary parameter ($5),
 * which the statement cuts at the events' starts ($9, from 1) and lengths ($10): as a `bytea[]`, each
 * payload went as hex text inside an array literal, which pg built and Postgres parsed character by
 * character (a scratch Postgres, batches of 18 payloads, 15.6 KB: Postgres 250-280 µs a call as an
 * array, 75-90 µs as one parameter; this process 190-290 µs against 135-150; bench/HISTORY.md session 25).
 */
export function fanOutValues(events: readonly IncomingEvent[], batchSize: number): unknown[] {
  const starts: number[] = [];
  const lengths: number[] = [];
  let next = 1;
  for (const { payload } of events) {
    starts.push(next);
    lengths.push(payload.length);
    next += payload.length;
  }
  return [
    events.map((event) => event.id),
    events.map((event) => event.workspaceId),
    events.map((event) => event.type),
    events.map((event) => event.taskId),
    Buffer.concat(events.map((event) => event.payload)),
    batchSize,
    events.map((event) => event.requestId ?? null),
    events.map((event) => event.traceparent ?? null),
    starts,
    lengths,
  ];
}

/** A delivery row, or (delivery_id null) an event queued for the batched fan-out. */
export type FanOutRow =
  | (Omit<WorkRow, 'type' | 'task_id' | 'workspace_id' | 'payload'> & { queued: false })
  | { delivery_id: null; event_id: string; queued: true };

/**
 * The fan-out in one statement: record the events, create the deliveries, return them.
 * - Events of a workspace with more than $6 live endpoints (or with fan-outs still queued, so a
 *   workspace's events keep their order) are recorded with a fan-out cursor instead (`fanouts`,
 *   migration 009): workers/fanout-expander.ts creates their deliveries in batches. They come back
 *   as marker rows (delivery_id null, queued true); a redelivered message of such an event finds
 *   nothing to do here (the cursor holds its progress).
 * - Deliveries go in in event-id order (one lock order for concurrent fan-outs), so created_at, which
 *   orders the delivery log, comes from the event's position in the batch (Kafka order), one
 *   microsecond apart, not from the insertion time.
 * - A delivery another owner already created (a redelivered message, or two owners during a
 *   rebalance) comes back from the conflict's no-op update, which sees it even when that owner
 *   committed after this statement began (DO NOTHING would skip it, and nobody might attempt it).
 * - Deliveries of an event this statement did not record first (it was known) are also read from
 *   the table: their endpoint may no longer be a target (deleted, or no longer subscribed).
 * - Whether a task has parked deliveries to an endpoint is probed once per (endpoint, task) of the
 *   batch (`backlogs`; parked deliveries without a task key once per endpoint), not per delivery,
 *   before the deliveries are created: a delivery queued behind its task's backlog is created parked
 *   (`parked_at_fan_out`), so the pipeline does not write the row again to park it. Other tasks'
 *   deliveries to that endpoint are not held back by that backlog (event order binds a task's only).
 * - A redelivered message's known deliveries are answered per endpoint (`known_backlogs`), as before.
 * - The deliveries look their backlog up (`IN (SELECT …)`, a hashed subplan: once per row), never
 *   join it: the planner expects one row of each CTE here, and joined them as nested loops, every
 *   delivery against every (endpoint, task) pair. 1,600 events to 4 endpoints took 8 s that way, 0.3 s
 *   now; 60 events to 100 endpoints 5 s, 0.25 s (bench/HISTORY.md, session 28).
 */
export const fanOutStatement = `WITH input AS (
    SELECT i.id, i.workspace_id, i.type, i.task_id, substring($5::bytea FROM i.payload_start FOR i.payload_length) AS payload, i.ord
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $9::int[], $10::int[]) WITH ORDINALITY
      AS i (id, workspace_id, type, task_id, payload_start, payload_length, ord)
  ), firsts AS (
    SELECT DISTINCT ON (id) id, workspace_id, type, task_id, payload, ord FROM input ORDER BY id, ord
  ), batched AS (
    -- Workspaces whose events fan out in batches: counted up to $6 + 1 endpoints, no further.
    SELECT w.workspace_id FROM (SELECT DISTINCT workspace_id FROM firsts) w
    WHERE EXISTS (SELECT 1 FROM fanouts q WHERE q.workspace_id = w.workspace_id)
       OR (SELECT count(*) FROM (SELECT 1 FROM endpoints e WHERE e.workspace_id = w.workspace_id AND e.deleted_at IS NULL
                                 AND e.disabled_at IS NULL LIMIT $6::int + 1) c) > $6::int
  ), recorded AS (
    -- Only events somebody subscribed to are kept (most workspaces have no endpoint).
    INSERT INTO events (id, workspace_id, type, task_id, payload, in_batches)
    SELECT f.id, f.workspace_id, f.type, f.task_id, f.payload, f.workspace_id IN (SELECT workspace_id FROM batched) FROM firsts f
    WHERE EXISTS (
      SELECT 1 FROM endpoints e WHERE e.workspace_id = f.workspace_id AND e.deleted_at IS NULL AND e.disabled_at IS NULL AND f.type = ANY (e.events)
    )
    ON CONFLICT (id) DO NOTHING
    RETURNING id, in_batches
  ), queued AS (
    -- One cursor per shard of the endpoint ids (store/fanouts.ts).
    INSERT INTO fanouts (event_id, shard, workspace_id, request_id, traceparent)
    SELECT f.id, s.shard, f.workspace_id, i.request_id, i.traceparent
    FROM recorded r JOIN firsts f ON f.id = r.id
    JOIN unnest($7::text[], $8::text[]) WITH ORDINALITY AS i (request_id, traceparent, ord) ON i.ord = f.ord
    CROSS JOIN generate_series(0, 15) AS s (shard)
    WHERE r.in_batches
    ORDER BY f.ord, s.shard
    RETURNING event_id
  ), targets AS (
    -- The deliveries to create: each live endpoint subscribed to the event, in its workspace.
    SELECT f.id AS event_id, f.at, f.shard, f.task_key, e.id AS endpoint_id, e.created_at AS endpoint_created_at
    FROM (SELECT id, workspace_id, type, ${shardOf('task_id')} AS shard, ${taskKeyOf('task_id')} AS task_key,
                 statement_timestamp() + make_interval(secs => ord / 1e6) AS at FROM firsts
          WHERE workspace_id NOT IN (SELECT workspace_id FROM batched)) f
    JOIN endpoints e ON e.workspace_id = f.workspace_id AND e.deleted_at IS NULL AND e.disabled_at IS NULL AND f.type = ANY (e.events)
  ), pairs AS MATERIALIZED (
    SELECT DISTINCT endpoint_id, task_key FROM targets
  ), unkeyed AS MATERIALIZED (
    SELECT e.id FROM endpoints e WHERE e.id IN (SELECT endpoint_id FROM targets) AND ${unkeyedBacklogColumn('e.id')}
  ), backlogs AS MATERIALIZED (
    -- The pairs with a backlog (none in normal operation). MATERIALIZED: inlined, the planner could
    -- pull the probes back into every row that looks them up.
    SELECT k.endpoint_id, k.task_key FROM pairs k
    WHERE k.endpoint_id IN (SELECT id FROM unkeyed) OR ${taskBacklogColumn('k.endpoint_id', 'k.task_key')}
  ), created AS (
    -- Created parked when its task has a backlog at the endpoint: the first attempt queues behind it
    -- (event order) without a second write of the row to park it.
    INSERT INTO deliveries (id, endpoint_id, event_id, created_at, updated_at, parked, backlog_shard, task_key)
    SELECT gen_random_uuid(), t.endpoint_id, t.event_id, t.at, t.at, (t.endpoint_id, t.task_key) IN (SELECT endpoint_id, task_key FROM backlogs),
           t.shard, t.task_key
    FROM targets t
    ORDER BY t.event_id, t.endpoint_created_at, t.endpoint_id
    ON CONFLICT (event_id, endpoint_id) WHERE NOT is_redelivery DO UPDATE SET updated_at = deliveries.updated_at
    RETURNING id, endpoint_id, event_id, state, next_attempt, next_attempt_at, handoff_pending, parked, parked AND xmax = 0 AS parked_at_fan_out
  ), known AS (
    SELECT d.id, d.endpoint_id, d.event_id, d.state, d.next_attempt, d.next_attempt_at, d.handoff_pending, d.parked, false AS parked_at_fan_out
    FROM deliveries d
    WHERE d.event_id IN (SELECT id FROM firsts EXCEPT SELECT id FROM recorded) AND NOT d.is_redelivery
      AND d.id NOT IN (SELECT id FROM created)
      AND NOT EXISTS (SELECT 1 FROM events ev WHERE ev.id = d.event_id AND ev.in_batches)
  ), ${backlogsCte('SELECT endpoint_id FROM known', 'known_backlogs')}, work AS (
    SELECT * FROM created UNION ALL SELECT * FROM known
  )
  SELECT d.id AS delivery_id, d.state, d.next_attempt, d.next_attempt_at, d.handoff_pending, d.parked, d.parked_at_fan_out,
         CASE WHEN (e.id, ${taskKeyOf('f.task_id')}) IN (SELECT endpoint_id, task_key FROM pairs)
              THEN (e.id, ${taskKeyOf('f.task_id')}) IN (SELECT endpoint_id, task_key FROM backlogs)
              ELSE e.id IN (SELECT id FROM known_backlogs WHERE endpoint_backlog) END AS backlog_ahead, e.id AS endpoint_id, e.url, e.deleted_at IS NOT NULL AS endpoint_deleted, e.secret_ciphertext,
         e.previous_secret_ciphertext, e.previous_secret_expires_at, d.event_id, false AS queued, f.ord, e.created_at AS endpoint_created_at
  FROM work d
  JOIN firsts f ON f.id = d.event_id
  JOIN endpoints e ON e.id = d.endpoint_id
  UNION ALL
  SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, event_id, true, NULL, NULL FROM (SELECT DISTINCT event_id FROM queued) q
  ORDER BY queued, ord, endpoint_created_at, endpoint_id`;
