-- Idempotency-Key (issue #18 item 1): the answer of a POST sent with an Idempotency-Key, per
-- workspace and key, replayed for a retry of the same request until expires_at.
-- A row is either claimed (claim_token set, no answer yet: an execution is running, or crashed and is
-- abandoned once claimed_at is older than the lock timeout) or answered (status_code, content_type,
-- body set, claim_token null). Expired rows count as absent and are deleted by the sweeper.
CREATE TABLE idempotency_keys (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  key text NOT NULL CHECK (key ~ '^[\x21-\x7e]{1,255}$'),
  fingerprint bytea NOT NULL CHECK (length(fingerprint) = 32),
  claim_token uuid,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  status_code smallint CHECK (status_code BETWEEN 200 AND 499),
  content_type text CHECK (length(content_type) <= 255),
  body bytea CHECK (length(body) <= 65536),
  PRIMARY KEY (workspace_id, key),
  CHECK ((claim_token IS NULL) = (status_code IS NOT NULL))
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
