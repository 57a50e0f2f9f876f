-- Projects, their sections (lists), tasks, labels and comments.

CREATE TABLE projects (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id      uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name              text NOT NULL,
  description       text,
  task_prefix       text NOT NULL CHECK (task_prefix ~ '^[A-Z][A-Z0-9]*$'),
  -- The number the next task of this project gets (incremented in the creating transaction).
  next_task_number  integer NOT NULL DEFAULT 1 CHECK (next_task_number >= 1),
  created_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, task_prefix),
  UNIQUE (workspace_id, id)
);
CREATE INDEX projects_workspace_created_idx ON projects (workspace_id, created_at, id);

CREATE TABLE sections (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id  uuid NOT NULL,
  project_id    uuid NOT NULL,
  name          text NOT NULL,
  position      integer NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, id),
  FOREIGN KEY (workspace_id, project_id) REFERENCES projects (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX sections_project_position_idx ON sections (project_id, position);
CREATE INDEX sections_workspace_idx ON sections (workspace_id, id);

CREATE TABLE tasks (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id  uuid NOT NULL,
  project_id    uuid NOT NULL,
  section_id    uuid NOT NULL,
  number        integer NOT NULL CHECK (number >= 1),
  name          text NOT NULL,
  is_completed  boolean NOT NULL DEFAULT false,
  -- Rich-text node array; NULL when empty.
  description   jsonb CHECK (description IS NULL OR jsonb_typeof(description) = 'array'),
  assignee_id   uuid,
  status_id     uuid,
  position      integer NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, number),
  FOREIGN KEY (workspace_id, project_id) REFERENCES projects (workspace_id, id) ON DELETE CASCADE,
  -- The section must be one of the task's project.
  FOREIGN KEY (project_id, section_id) REFERENCES sections (project_id, id) ON DELETE CASCADE,
  FOREIGN KEY (workspace_id, status_id) REFERENCES statuses (workspace_id, id),
  FOREIGN KEY (workspace_id, assignee_id) REFERENCES members (workspace_id, user_id)
);
CREATE INDEX tasks_workspace_idx ON tasks (workspace_id, id);
CREATE INDEX tasks_section_position_idx ON tasks (section_id, position);
CREATE INDEX tasks_status_idx ON tasks (status_id);
CREATE INDEX tasks_assignee_idx ON tasks (workspace_id, assignee_id) WHERE assignee_id IS NOT NULL;

CREATE TABLE labels (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name          text NOT NULL,
  color         text NOT NULL CHECK (color ~ '^#[0-9A-Fa-f]{6}$'),
  UNIQUE (workspace_id, id)
);

CREATE TABLE task_labels (
  task_id   uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  label_id  uuid NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
  PRIMARY KEY (task_id, label_id)
);
CREATE INDEX task_labels_label_idx ON task_labels (label_id);

CREATE TABLE comments (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id       uuid NOT NULL,
  task_id            uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  -- Rich-text node array.
  body               jsonb NOT NULL CHECK (jsonb_typeof(body) = 'array'),
  author_api_key_id  uuid REFERENCES api_keys (id) ON DELETE SET NULL,
  author_user_id     uuid REFERENCES users (id),
  -- The key's or the user's name when written: what the comment is attributed to.
  author_name        text NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE
);
CREATE INDEX comments_task_idx ON comments (task_id, created_at);
CREATE INDEX comments_workspace_idx ON comments (workspace_id, id);
