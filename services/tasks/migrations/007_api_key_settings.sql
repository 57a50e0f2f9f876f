-- What the workspace settings list of API keys shows (issue #16): the first characters of each key
-- (to recognise it; the key itself is never stored) and when it was last used. Both columns are
-- nullable without a default, so adding them rewrites nothing. Keys created before this migration
-- have no prefix. last_used_at is written by AuthenticateApiKey at most once a minute per key.
ALTER TABLE api_keys
  ADD COLUMN prefix text CHECK (prefix IS NULL OR length(prefix) BETWEEN 1 AND 16),
  ADD COLUMN last_used_at timestamptz;

-- The settings list: a workspace's live keys, newest first (owners see all, members theirs).
CREATE INDEX api_keys_live_by_workspace ON api_keys (workspace_id, created_at DESC, id) WHERE revoked_at IS NULL;
