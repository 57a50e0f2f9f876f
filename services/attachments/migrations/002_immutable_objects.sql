-- Registered files are immutable: at registration the uploaded object is copied (server-side) to a key of
-- its own that no upload URL can write, and the attachment records that key. The upload URL stays valid
-- for 7 days, but a PUT to it only reaches the upload key, which the sweeper clears once the URL expired.
--
-- Attachments registered before this migration keep serving their upload key; it becomes immutable
-- when their upload URL expires (at most 7 days after the upload was requested).
ALTER TABLE attachments ADD COLUMN object_key text UNIQUE;
UPDATE attachments a SET object_key = u.object_key FROM uploads u WHERE u.id = a.id;
ALTER TABLE attachments ALTER COLUMN object_key SET NOT NULL;

-- Set once the sweeper removed the upload object of a registered upload after its URL expired (a copy
-- left by a crash between registration and that removal, or bytes PUT again after registration).
ALTER TABLE uploads ADD COLUMN upload_object_cleared_at timestamptz;
-- Attachments registered before: their upload object is the attachment's object, nothing to clear
-- (the sweeper also skips them by key); marked so the partial index below leaves them out.
UPDATE uploads u SET upload_object_cleared_at = now() WHERE EXISTS (SELECT 1 FROM attachments a WHERE a.id = u.id);
CREATE INDEX uploads_uncleared_idx ON uploads (expires_at) WHERE upload_object_cleared_at IS NULL;
