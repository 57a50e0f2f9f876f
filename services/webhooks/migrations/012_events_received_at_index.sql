-- migrate: no-transaction
-- The retention sweep's second lookup without an index (011 has the first): old events were found by
-- received_at, which no index covered: each sweep read the whole events table (payloads included)
-- at least once, as its last batch looked for rows there were no more of. Events are written once
-- and never updated, in received_at order, so the index costs one append a recorded event.
-- Built CONCURRENTLY (no lock that blocks the pipeline's writes; see packages/common migrations.ts),
-- IF NOT EXISTS so an interrupted run can be repeated.
CREATE INDEX CONCURRENTLY IF NOT EXISTS events_received_at_idx ON events (received_at);
