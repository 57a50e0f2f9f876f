-- OAuth grants revoked at the app's authorization server (issue #17), kept while their access tokens
-- may still be live: a gateway replica that (re)subscribes to the revocation stream reads the live
-- ones (ListRevokedGrants) so a revocation it missed is still refused. Rows past expires_at are
-- deleted by the next announcement.
CREATE TABLE revoked_grants (
  grant_id text PRIMARY KEY CHECK (length(grant_id) BETWEEN 1 AND 128),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz NOT NULL DEFAULT now(),
  revoked_by uuid
);
CREATE INDEX revoked_grants_by_expiry ON revoked_grants (expires_at DESC);
