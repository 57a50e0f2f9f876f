-- migrate: no-transaction
-- Redeliveries by event, for the retention sweep's "does any delivery still refer to this event"
-- (store/retention.ts). Originals answer that through deliveries_event_endpoint_key (event_id leads
-- it; its predicate is NOT is_redelivery), redeliveries through this one, so deliveries_event_idx,
-- a third index on event_id that every delivery paid an entry in, can go (018).
-- Partial: redeliveries are the few rows a person asked for again.
-- Built CONCURRENTLY (no lock that blocks the pipeline's writes; see packages/common migrations.ts),
-- IF NOT EXISTS so an interrupted run can be repeated.
CREATE INDEX CONCURRENTLY IF NOT EXISTS deliveries_redelivered_event_idx ON deliveries (event_id) WHERE is_redelivery;
