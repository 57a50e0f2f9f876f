-- Workspaces, the people in them, their credentials and task statuses.
-- Every table that holds workspace data carries workspace_id, and composite foreign keys
-- (workspace_id, x_id) make it impossible to point at a row of another workspace.

CREATE TABLE users (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name        text NOT NULL,
  -- Stored lower-cased, so the unique constraint is case-insensitive.
  email       text NOT NULL UNIQUE CHECK (email = lower(email)),
  avatar_url  text,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workspaces (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name           text NOT NULL,
  url_id         text NOT NULL UNIQUE CHECK (url_id ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
  avatar_url     text,
  task_prefix    text NOT NULL CHECK (task_prefix ~ '^[A-Z][A-Z0-9]*$'),
  plan           text NOT NULL CHECK (plan IN ('free', 'pro')),
  -- Plan-limit counters, changed only by conditional UPDATEs in the transaction that creates or
  -- deletes the row they count (race-free: the row lock serialises them).
  project_count  integer NOT NULL DEFAULT 0 CHECK (project_count >= 0),
  task_count     integer NOT NULL DEFAULT 0 CHECK (task_count >= 0),
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE members (
  workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  user_id       uuid NOT NULL REFERENCES users (id),
  role          text NOT NULL CHECK (role IN ('owner', 'member', 'guest')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX members_user_idx ON members (user_id);

CREATE TABLE api_keys (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id  uuid NOT NULL,
  user_id       uuid NOT NULL,
  name          text NOT NULL,
  -- sha256 of the key; the key itself is shown once and never stored.
  key_hash      bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz,
  UNIQUE (workspace_id, id),
  FOREIGN KEY (workspace_id, user_id) REFERENCES members (workspace_id, user_id) ON DELETE CASCADE
);

CREATE TABLE statuses (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name          text NOT NULL,
  color         text NOT NULL CHECK (color ~ '^#[0-9A-Fa-f]{6}$'),
  system_type   text CHECK (system_type IN ('todo', 'done')),
  position      integer NOT NULL,
  UNIQUE (workspace_id, id)
);
CREATE INDEX statuses_workspace_position_idx ON statuses (workspace_id, position);
-- One `todo` and one `done` status per workspace (custom ones are unlimited).
CREATE UNIQUE INDEX statuses_system_type_key ON statuses (workspace_id, system_type) WHERE system_type IS NOT NULL;
