-- migrate: no-transaction
-- Parked deliveries by endpoint and task key (019): the fan-out asks, per endpoint and task of its
-- events, whether that task has deliveries parked (store/delivery-work.ts). The equal keys of a
-- task's parked deliveries are stored once (btree deduplication), so the entries a drained backlog
-- leaves dead until vacuum cost a probe a page, not a walk through the endpoint's whole backlog.
-- Partial, as deliveries_parked_idx: only parked rows (usually none) have an entry.
-- Built CONCURRENTLY (no lock that blocks the pipeline's writes), IF NOT EXISTS so an interrupted run
-- can be repeated.
CREATE INDEX CONCURRENTLY IF NOT EXISTS deliveries_parked_task_idx ON deliveries (endpoint_id, task_key) WHERE parked;
