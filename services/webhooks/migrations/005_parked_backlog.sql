-- Per-endpoint backlog (issue #14): when an endpoint already holds as much work as it may in one
-- replica (a hanging or slow endpoint), its further deliveries are parked instead of held in memory:
-- the row already exists, `parked` marks it as waiting in the endpoint's backlog, and the source Kafka
-- message is then done (committable). A drainer that holds the endpoint's lease attempts the parked
-- deliveries in (created_at, id) order as the endpoint frees up. Every update that moves a delivery on
-- sets parked = false; the partial index holds only parked rows (usually none), so the attempt log's
-- HOT updates, which leave parked false, stay HOT.
ALTER TABLE deliveries ADD COLUMN parked boolean NOT NULL DEFAULT false;
CREATE INDEX deliveries_parked_idx ON deliveries (endpoint_id, created_at, id) WHERE parked;

-- Which replica drains an endpoint's backlog (one at a time, so the backlog keeps its order).
CREATE TABLE backlog_leases (
  endpoint_id  uuid PRIMARY KEY,
  owner        text NOT NULL,
  expires_at   timestamptz NOT NULL
);

-- Every replica polls for endpoints deleted since its last look (attempts to them stop within a second).
CREATE INDEX endpoints_deleted_idx ON endpoints (deleted_at) WHERE deleted_at IS NOT NULL;
