-- The workspace's audit trail (issue #19 item 3): who created, changed or deleted what, and when.
-- Written in the same transaction as the change (packages/common/src/audit/store.ts); names only:
-- `changes` lists the changed fields' names, never their values; no payloads, no secrets.
CREATE TABLE audit_events (
  id            uuid PRIMARY KEY,
  workspace_id  uuid NOT NULL,
  at            timestamptz NOT NULL,
  actor_type    text NOT NULL CHECK (actor_type IN ('apiKey', 'user', 'system')),
  actor_id      text CHECK (length(actor_id) <= 64),
  actor_name    text CHECK (length(actor_name) <= 200),
  action        text NOT NULL CHECK (length(action) <= 64),
  resource_type text NOT NULL CHECK (length(resource_type) <= 64),
  resource_id   text NOT NULL CHECK (length(resource_id) <= 64),
  changes       text[] NOT NULL DEFAULT '{}' CHECK (cardinality(changes) <= 32),
  request_id    text CHECK (length(request_id) <= 128)
);

-- GET /v1/audit: a workspace's newest first, keyset (at, id) < cursor.
CREATE INDEX audit_events_workspace_at ON audit_events (workspace_id, at DESC, id DESC);
-- The retention sweep: rows older than AUDIT_RETENTION_DAYS.
CREATE INDEX audit_events_at ON audit_events (at);
