-- Backlogs drained by every replica (issues #19, #21). A backlog's deliveries are split into 8 shards
-- by their event's task (hashtext of the task id), each leased on its own, so two replicas drain one
-- endpoint's backlog at once while a task's deliveries stay with one of them (event order per task).
-- One replica holding the whole endpoint (backlog_leases) drained it at that replica's concurrency
-- for the endpoint, and a pipeline that fell behind never caught up while the load lasted.
--
-- Rolling upgrades: a replica of this version takes the endpoint's backlog_leases row too, with the
-- shared owner 'shards', and drains only while it holds it; an older replica holding the row (its
-- own owner) keeps the endpoint until it lets go, and never takes a row owned by 'shards'.
CREATE TABLE backlog_shard_leases (
  endpoint_id  uuid NOT NULL,
  shard        smallint NOT NULL CHECK (shard BETWEEN 0 AND 7),
  owner        text NOT NULL,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (endpoint_id, shard)
);
