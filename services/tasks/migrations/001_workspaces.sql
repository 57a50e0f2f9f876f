-- Workspaces and the people in them. Later migrations add projects, tasks, comments and the outbox.
CREATE TABLE workspaces (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name          text NOT NULL,
  url_id        text NOT NULL UNIQUE,
  avatar_url    text,
  task_prefix   text NOT NULL,
  plan          text NOT NULL CHECK (plan IN ('free', 'pro')),
  created_at    timestamptz NOT NULL DEFAULT now()
);
