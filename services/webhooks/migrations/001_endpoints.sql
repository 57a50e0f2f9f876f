-- Registered webhook endpoints. The secret is stored encrypted (AES-256-GCM, key from
-- WEBHOOK_SECRET_ENCRYPTION_KEY, endpoint id as associated data); it is never returned.
-- Deleting an endpoint marks it deleted: its delivery log stays referable, its pending retries stop.
CREATE TABLE endpoints (
  id                uuid PRIMARY KEY,
  workspace_id      text NOT NULL,
  url               text NOT NULL,
  events            text[] NOT NULL CHECK (cardinality(events) > 0
                      AND events <@ ARRAY['task.created', 'task.updated', 'task.completed']),
  secret_ciphertext bytea NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  deleted_at        timestamptz
);
CREATE INDEX endpoints_workspace_idx ON endpoints (workspace_id, created_at, id) WHERE deleted_at IS NULL;
