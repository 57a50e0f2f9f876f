-- Registered webhook endpoints; the secret is stored encrypted (AES-256-GCM) with a key from config.
CREATE TABLE endpoints (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id     uuid NOT NULL,
  url              text NOT NULL,
  events           text[] NOT NULL,
  secret_encrypted bytea NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  deleted_at       timestamptz
);
CREATE INDEX endpoints_workspace_idx ON endpoints (workspace_id) WHERE deleted_at IS NULL;
