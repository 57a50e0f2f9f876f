-- GET /v1/usage sums the bytes a workspace stores: an index-only scan of this index, not a walk of the
-- workspace's attachment rows.
CREATE INDEX attachments_workspace_size_idx ON attachments (workspace_id) INCLUDE (size_bytes);
