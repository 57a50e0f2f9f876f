-- Large fan-outs (issue #21 item 3). An event of a workspace with more live endpoints than
-- WEBHOOK_FANOUT_BATCH_SIZE is recorded with a fan-out cursor in one small statement (the Kafka message
-- is then done), and its deliveries are created in batches of that size by endpoint id (keyset), each
-- batch attempted before the cursor moves past it, so a crash resumes at the first batch not finished.
-- No statement writes more than one batch of rows: other workspaces' events interleave.
-- A fan-out has one cursor per shard of the endpoint ids (16, by the id's first hex digit), each leased
-- on its own, so the replicas share a large fan-out while an endpoint's deliveries stay in one replica
-- (event order per endpoint and task).
ALTER TABLE events ADD COLUMN in_batches boolean NOT NULL DEFAULT false;

CREATE TABLE fanouts (
  event_id        text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  shard           smallint NOT NULL CHECK (shard BETWEEN 0 AND 15),
  workspace_id    text NOT NULL,
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  -- Every delivery to an endpoint with id <= after_endpoint is finished (attempted and logged, handed
  -- to a retry topic, or parked); NULL: none yet.
  after_endpoint  uuid,
  request_id      text,
  traceparent     text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (event_id, shard)
);
-- A workspace's fan-outs run in event order (seq) per shard, one lease holder per (workspace, shard).
CREATE INDEX fanouts_workspace_idx ON fanouts (workspace_id, shard, seq);

CREATE TABLE fanout_leases (
  workspace_id  text NOT NULL,
  shard         smallint NOT NULL,
  owner         text NOT NULL,
  expires_at    timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, shard)
);

-- The keyset walk over a workspace's endpoints (all of them: a delivery created before its endpoint
-- was deleted, disabled or unsubscribed is still read back and settled).
CREATE INDEX endpoints_workspace_id_idx ON endpoints (workspace_id, id);
