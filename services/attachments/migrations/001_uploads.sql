-- Upload sessions and attachment records of the attachments context.
--
-- An upload is handed out with a presigned PUT URL valid 7 days (expires_at). Its row lives as long as
-- that URL can write the object: an upload that was never registered, or whose attachment was removed
-- (revoked_at), is deleted together with its object by the sweeper once the URL has expired, so a late
-- PUT cannot leave an object nobody knows about.
CREATE TABLE uploads (
  id            uuid PRIMARY KEY,
  workspace_id  uuid NOT NULL,
  object_key    text NOT NULL UNIQUE,
  content_type  text NOT NULL,
  size_bytes    bigint NOT NULL CHECK (size_bytes > 0),
  expires_at    timestamptz NOT NULL,
  -- Set when its attachment was removed (task deleted): the upload can never be registered again.
  revoked_at    timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX uploads_expires_at_idx ON uploads (expires_at);

-- A registered file. Its id is the upload's id, so the primary key makes registering one upload twice
-- (even concurrently) yield one attachment; the foreign key (no cascade) stops the sweeper from deleting
-- an upload that became an attachment meanwhile.
CREATE TABLE attachments (
  id              uuid PRIMARY KEY REFERENCES uploads (id),
  workspace_id    uuid NOT NULL,
  task_id         uuid NOT NULL,
  name            text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  content_type    text NOT NULL,
  size_bytes      bigint NOT NULL CHECK (size_bytes > 0),
  -- Secret part of the permanent download URL (32 random bytes, base64url).
  download_token  text NOT NULL UNIQUE,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX attachments_task_idx ON attachments (workspace_id, task_id, created_at, id);
-- The sweeper walks tasks in id order.
CREATE INDEX attachments_task_id_idx ON attachments (task_id);
