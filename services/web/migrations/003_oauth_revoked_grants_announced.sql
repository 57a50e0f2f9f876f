-- When a revoked grant was pushed to the gateways (issue #17): NULL until the tasks service
-- acknowledged AnnounceGrantRevocation. The sweeper announces again the grants revoked within the
-- last access token lifetime that are still NULL (the web replica stopped before it could).
ALTER TABLE oauth_revoked_grants ADD COLUMN announced_at timestamptz;
CREATE INDEX oauth_revoked_grants_unannounced_idx ON oauth_revoked_grants (revoked_at) WHERE announced_at IS NULL;
