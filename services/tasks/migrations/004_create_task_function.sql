-- Creating a task in one round trip (called as a single statement outside an explicit transaction,
-- so every row lock it takes is held only for the function's own run and commit, never across a
-- network round trip). plpgsql because in READ COMMITTED each statement of a VOLATILE function
-- takes a fresh snapshot: the section's `max(position)` is read after its row lock is granted, so it
-- sees the task the previous lock holder inserted. One statement with CTEs shares one snapshot
-- and would miss it.
--
-- Outcomes: 'created' (with the number), or 'project_not_found' / 'section_not_in_project' /
-- 'assignee_not_member' (checked in that order) before anything is written. The free plan's task
-- limit is checked last, when the number is already drawn: it raises SQLSTATE TW403, which rolls
-- the whole statement back.
--
-- p_event is the `task.created` payload built by the caller; its `data.number` and
-- `data.statusId` are filled in here (both are known only inside the transaction).
CREATE FUNCTION create_task(
  p_task_id uuid,
  p_workspace_id uuid,
  p_project_id uuid,
  p_section_id uuid,
  p_name text,
  p_assignee_id uuid,
  p_created_at timestamptz,
  p_free_task_limit integer,
  p_event_id uuid,
  p_event jsonb,
  OUT outcome text,
  OUT task_number integer
) LANGUAGE plpgsql AS $$
DECLARE
  v_status_id uuid;
  v_position integer;
BEGIN
  PERFORM FROM projects WHERE workspace_id = p_workspace_id AND id = p_project_id;
  IF NOT FOUND THEN
    outcome := 'project_not_found';
    RETURN;
  END IF;
  -- Locks from here on (until commit). The section row serialises appends to the section
  -- (position = max + 1); while it is locked its project cannot be deleted either.
  PERFORM FROM sections WHERE project_id = p_project_id AND id = p_section_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    outcome := 'section_not_in_project';
    RETURN;
  END IF;
  IF p_assignee_id IS NOT NULL THEN
    PERFORM FROM members WHERE workspace_id = p_workspace_id AND user_id = p_assignee_id;
    IF NOT FOUND THEN
      outcome := 'assignee_not_member';
      RETURN;
    END IF;
  END IF;
  SELECT id INTO v_status_id FROM statuses WHERE workspace_id = p_workspace_id AND system_type = 'todo';
  SELECT coalesce(max(position) + 1, 0) INTO v_position FROM tasks WHERE section_id = p_section_id;
  -- The project row lock keeps numbers gap-free and unique until commit.
  UPDATE projects SET next_task_number = next_task_number + 1
  WHERE workspace_id = p_workspace_id AND id = p_project_id
  RETURNING next_task_number - 1 INTO task_number;
  -- Every creation in the workspace needs its row (the plan-slot counter): locked last, so for
  -- the shortest time. The conditional UPDATE re-checks the count on the latest row version, so
  -- concurrent creations (any replica) cannot overshoot the free plan's limit.
  UPDATE workspaces SET task_count = task_count + 1
  WHERE id = p_workspace_id AND (plan = 'pro' OR task_count < p_free_task_limit);
  IF NOT FOUND THEN
    RAISE EXCEPTION 'free plan task limit reached' USING ERRCODE = 'TW403';
  END IF;

  INSERT INTO tasks (id, workspace_id, project_id, section_id, number, name, assignee_id, status_id, position, created_at)
  VALUES (p_task_id, p_workspace_id, p_project_id, p_section_id, task_number, p_name, p_assignee_id, v_status_id, v_position, p_created_at);
  INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, workspace_id, created_at)
  VALUES (
    p_event_id, 'task', p_task_id::text, 'task.created',
    jsonb_set(jsonb_set(p_event, '{data,number}', to_jsonb(task_number)), '{data,statusId}', coalesce(to_jsonb(v_status_id), 'null'::jsonb)),
    p_workspace_id, p_created_at
  );
  outcome := 'created';
END;
$$;
