-- Sessions of people signed in to the app. The cookie holds a random 256-bit token; only its
-- sha256 is stored, so a copy of this table signs nobody in. A session ends after
-- SESSION_IDLE_TIMEOUT_S without use or SESSION_ABSOLUTE_TIMEOUT_S after sign-in, checked on
-- every request; ended rows are deleted by the sweeper.
CREATE TABLE sessions (
  id_hash       bytea PRIMARY KEY CHECK (length(id_hash) = 32),
  -- The person: the identity provider's verified email, lower-cased (tasks.users.email's form).
  email         text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 320),
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now()
);
-- The sweeper's two conditions.
CREATE INDEX sessions_last_seen_at_idx ON sessions (last_seen_at);
CREATE INDEX sessions_created_at_idx ON sessions (created_at);
-- Ending every session of a person (a removed member; sign out everywhere).
CREATE INDEX sessions_email_idx ON sessions (email);
