-- A delivery's backlog shard (store/backlog.ts: the hash of its event's task id, modulo 8), written
-- when the delivery is created. The drainer picks an endpoint's parked deliveries of the shards it
-- holds; it computed each one's shard from its event, and that join made Postgres hash the whole
-- events table (a sequential scan, 30 days of events in production) for every batch it picked.
-- With the shard on the row, it walks the endpoint's parked deliveries in order and stops at its batch.
--
-- Nullable and without a default: adding it rewrites nothing. Rows written before this migration (and
-- by an older replica during a rolling upgrade) have none; the drainer takes their event's task then.
ALTER TABLE deliveries ADD COLUMN backlog_shard smallint;
