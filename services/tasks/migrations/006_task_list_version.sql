-- A version of each project's task list, bumped in the same transaction as any change to one of its
-- tasks (statement-level: once per statement and project, however many rows it wrote). A reader
-- that rendered the list at version v may serve its copy while the version is still v: the gateway
-- asks ListTasks with the version it holds and gets "not modified" instead of 140 KB of JSON.
-- (Sections only get appended and renamed, which changes no task list.)
ALTER TABLE projects ADD COLUMN list_version bigint NOT NULL DEFAULT 1;

CREATE FUNCTION tasks_bump_list_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE projects SET list_version = list_version + 1 WHERE id IN (SELECT DISTINCT project_id FROM new_rows);
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE projects SET list_version = list_version + 1
    WHERE id IN (SELECT project_id FROM new_rows UNION SELECT project_id FROM old_rows);
  ELSE
    UPDATE projects SET list_version = list_version + 1 WHERE id IN (SELECT DISTINCT project_id FROM old_rows);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER tasks_list_version_insert AFTER INSERT ON tasks REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tasks_bump_list_version();
CREATE TRIGGER tasks_list_version_update AFTER UPDATE ON tasks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tasks_bump_list_version();
CREATE TRIGGER tasks_list_version_delete AFTER DELETE ON tasks REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tasks_bump_list_version();
