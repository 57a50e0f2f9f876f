-- `updatedAt` in both task shapes (issue 21, item 2: incremental sync with `?updatedSince=`).
-- The column exists since 002 (`updated_at`, set by every task write and by label changes:
-- store/task-changes.ts, store/labels.ts touchTasks), so no column is added and no table rewritten:
-- this only makes the list-JSON trigger of migration 005 render it too, from now on. Rows written
-- before keep their old list_json until migration 015 re-renders them in small batches.
CREATE OR REPLACE FUNCTION tasks_render_list_json() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- A new task was last changed when it was created (not at the inserting transaction's start).
  IF TG_OP = 'INSERT' THEN
    NEW.updated_at := NEW.created_at;
  END IF;
  SELECT row_to_json(item)::text INTO NEW.list_json
  FROM (SELECT NEW.id AS "id", NEW.number AS "number", NEW.name AS "name", NEW.is_completed AS "isCompleted",
               nullif(NEW.description, '[]'::jsonb) AS "description", NEW.section_id AS "listId",
               NEW.assignee_id AS "assigneeId", NEW.status_id AS "statusId", NEW.position AS "order",
               to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt",
               to_char(NEW.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt") item;
  RETURN NEW;
END
$$;
