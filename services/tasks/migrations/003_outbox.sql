-- Transactional outbox (Debezium outbox-event-router column names): a task change and its event
-- are written in one transaction; the relay (src/outbox) publishes rows to Kafka in `seq` order.

CREATE TABLE outbox (
  -- The event id (the payload's id is `evt_<id>`).
  id              uuid PRIMARY KEY,
  aggregatetype   text NOT NULL,
  -- The task id: the Kafka message key.
  aggregateid     text NOT NULL,
  -- The event kind: task.created, task.updated, task.completed.
  type            text NOT NULL,
  -- Exactly the webhook payload of the API contract.
  payload         jsonb NOT NULL,
  workspace_id    uuid NOT NULL,
  seq             bigserial NOT NULL UNIQUE,
  created_at      timestamptz NOT NULL DEFAULT now(),
  published_at    timestamptz,
  -- Set when a row can never be published (payload failed validation); kept for inspection.
  rejected_at     timestamptz,
  rejected_reason text
);
-- The relay's queue: unpublished rows in order.
CREATE INDEX outbox_pending_idx ON outbox (seq) WHERE published_at IS NULL AND rejected_at IS NULL;
-- Retention: published rows are deleted after a while.
CREATE INDEX outbox_published_idx ON outbox (published_at) WHERE published_at IS NOT NULL;

-- Wakes the relay (LISTEN tasks_outbox) when a transaction that wrote events commits; Postgres
-- folds identical notifications of one transaction into one.
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tasks_outbox', '');
  RETURN NULL;
END;
$$;
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
