-- Events as received from task-events.v1: the exact payload bytes, so every attempt (and every
-- redelivery) sends and signs the same body.
CREATE TABLE events (
  id            text PRIMARY KEY,            -- evt_<uuid>, the X-Service-Delivery header
  workspace_id  text NOT NULL,
  type          text NOT NULL,
  task_id       text NOT NULL,
  payload       bytea NOT NULL,
  received_at   timestamptz NOT NULL DEFAULT now()
);

-- One delivery per (event, endpoint): the unique index makes a redelivered Kafka message find the
-- delivery it already created. A manual redelivery is a new row (a new attempt chain) pointing at
-- the original.
--   state pending:  next_attempt is the attempt to make (at next_attempt_at)
--   handoff_pending: the next step (retry message, dead letter) is decided but not yet acknowledged
--                    by Kafka; whoever handles the source message again produces it.
CREATE TABLE deliveries (
  id               uuid PRIMARY KEY,
  endpoint_id      uuid NOT NULL REFERENCES endpoints (id),
  event_id         text NOT NULL REFERENCES events (id),
  redelivery_of    uuid REFERENCES deliveries (id) ON DELETE SET NULL,
  state            text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed', 'cancelled')),
  next_attempt     smallint NOT NULL DEFAULT 1 CHECK (next_attempt BETWEEN 1 AND 6),
  next_attempt_at  timestamptz,
  handoff_pending  boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at       timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX deliveries_event_endpoint_key ON deliveries (event_id, endpoint_id) WHERE redelivery_of IS NULL;
CREATE INDEX deliveries_endpoint_recent_idx ON deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX deliveries_event_idx ON deliveries (event_id);
-- For the retention job: finished deliveries by age.
CREATE INDEX deliveries_finished_idx ON deliveries (updated_at) WHERE state <> 'pending';

-- The delivery log: every attempt, including ones refused by the SSRF guard (outcome blocked).
-- A replica that crashed mid-attempt may have sent an attempt twice; both are recorded.
CREATE TABLE attempts (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id  uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  attempt      smallint NOT NULL CHECK (attempt BETWEEN 1 AND 5),
  started_at   timestamptz NOT NULL,
  duration_ms  integer NOT NULL CHECK (duration_ms >= 0),
  outcome      text NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'blocked')),
  status_code  smallint,
  error        text
);
CREATE INDEX attempts_delivery_idx ON attempts (delivery_id, attempt, id);
