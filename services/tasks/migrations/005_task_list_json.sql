-- Each task's JSON in the list shape of GET /v1/projects/:projectId/tasks (contract: TaskListItem),
-- kept current by a trigger on every insert and update. Listing a project then concatenates stored
-- text in display order instead of rendering every row on every request.
ALTER TABLE tasks ADD COLUMN list_json text;

CREATE FUNCTION tasks_render_list_json() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT row_to_json(item)::text INTO NEW.list_json
  FROM (SELECT NEW.id AS "id", NEW.number AS "number", NEW.name AS "name", NEW.is_completed AS "isCompleted",
               nullif(NEW.description, '[]'::jsonb) AS "description", NEW.section_id AS "listId",
               NEW.assignee_id AS "assigneeId", NEW.status_id AS "statusId", NEW.position AS "order",
               to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt") item;
  RETURN NEW;
END
$$;

CREATE TRIGGER tasks_list_json BEFORE INSERT OR UPDATE ON tasks
  FOR EACH ROW EXECUTE FUNCTION tasks_render_list_json();

UPDATE tasks SET list_json = NULL;
ALTER TABLE tasks ALTER COLUMN list_json SET NOT NULL;
