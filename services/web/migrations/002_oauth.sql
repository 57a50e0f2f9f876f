-- The OAuth 2.0 authorization server's storage (oidc-provider's adapter, store/oauth-models.ts):
-- every model it persists (clients registered dynamically, grants, authorization codes, refresh
-- tokens, sessions, interactions) as one row of JSON. Access tokens are JWTs and are not stored.
-- Expired rows are refused by lookups and deleted by the sweeper.
CREATE TABLE oauth_models (
  model        text NOT NULL CHECK (length(model) BETWEEN 1 AND 64),
  id           text NOT NULL CHECK (length(id) BETWEEN 1 AND 512),
  payload      jsonb NOT NULL,
  -- The grant a token or code belongs to (a Grant row: its own id), so revoking a grant is one DELETE.
  grant_id     text,
  uid          text,
  -- The person (users.id of the tasks service) of a Grant row: the "connected apps" list.
  account_id   text,
  expires_at   timestamptz,
  consumed_at  timestamptz,
  PRIMARY KEY (model, id)
);
CREATE INDEX oauth_models_grant_id_idx ON oauth_models (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_models_uid_idx ON oauth_models (uid) WHERE uid IS NOT NULL;
CREATE INDEX oauth_models_expires_at_idx ON oauth_models (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX oauth_models_account_grants_idx ON oauth_models (account_id) WHERE model = 'Grant';

-- Grants revoked (in "connected apps", by reuse of a rotated refresh token, or by RFC 7009
-- revocation of a refresh token). Access tokens are self-contained JWTs that carry their grant id
-- (claim `grant_id`), so a resource server refuses one whose grant is listed here until it expires
-- (1 h after issue at most: rows older than the access token lifetime may be swept).
CREATE TABLE oauth_revoked_grants (
  grant_id    text PRIMARY KEY CHECK (length(grant_id) BETWEEN 1 AND 512),
  account_id  text,
  revoked_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_revoked_grants_revoked_at_idx ON oauth_revoked_grants (revoked_at);
