-- migrate: no-transaction
-- deliveries_event_idx (event_id) answered the events foreign key's check when the sweep deleted an
-- event, and the sweep's own "no delivery refers to it". The key is gone (017), and the sweep now asks
-- deliveries_event_endpoint_key (originals) and deliveries_redelivered_event_idx (016), so every new
-- delivery no longer pays an entry in a third index on event_id.
-- A replica of the version before, during a rolling upgrade, asks without is_redelivery: its sweep
-- reads deliveries once a batch instead of through this index, until it is replaced.
-- Dropped CONCURRENTLY (no lock that blocks the pipeline's writes), IF EXISTS so a run can be repeated.
DROP INDEX CONCURRENTLY IF EXISTS deliveries_event_idx;
