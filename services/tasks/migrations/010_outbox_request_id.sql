-- Request ids (README "Request ids"): the outbox keeps the id of the request that made a change
-- beside its event, and the relay sends it as the Kafka header `request-id`, so the webhooks service
-- logs it with the deliveries of that event. Null for changes made outside a request.
ALTER TABLE outbox ADD COLUMN request_id text;

-- create_tasks with one more argument, p_request_ids[i] = item i's request id; otherwise as in
-- migration 004. The ten-argument version stays for replicas of the previous release during a
-- rolling update (a later migration may drop it).
CREATE FUNCTION create_tasks(
  p_workspace_id uuid,
  p_project_id uuid,
  p_section_id uuid,
  p_free_task_limit integer,
  p_ids uuid[],
  p_names text[],
  p_assignee_ids uuid[],
  p_created_at timestamptz[],
  p_event_ids uuid[],
  p_events jsonb[],
  p_request_ids text[]
) RETURNS TABLE (item_outcome text, item_number integer) LANGUAGE plpgsql AS $$
DECLARE
  v_count integer := cardinality(p_ids);
  v_outcomes text[] := array_fill(NULL::text, ARRAY[v_count]);
  v_numbers integer[] := array_fill(NULL::integer, ARRAY[v_count]);
  v_positions integer[] := array_fill(NULL::integer, ARRAY[v_count]);
  v_wanted integer := 0;
  v_granted integer;
  v_given integer := 0;
  v_first_number integer;
  v_next_position integer;
  v_status_id uuid;
BEGIN
  PERFORM FROM projects WHERE workspace_id = p_workspace_id AND id = p_project_id;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'project_not_found'::text, NULL::integer FROM generate_series(1, v_count);
    RETURN;
  END IF;
  -- Locks from here on (until commit), always in this order: section, workspace, project. The
  -- section row serialises appends to the section (position = max + 1).
  PERFORM FROM sections WHERE project_id = p_project_id AND id = p_section_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'section_not_in_project'::text, NULL::integer FROM generate_series(1, v_count);
    RETURN;
  END IF;
  FOR i IN 1 .. v_count LOOP
    IF p_assignee_ids[i] IS NOT NULL
       AND NOT EXISTS (SELECT FROM members WHERE workspace_id = p_workspace_id AND user_id = p_assignee_ids[i]) THEN
      v_outcomes[i] := 'assignee_not_member';
    ELSE
      v_wanted := v_wanted + 1;
    END IF;
  END LOOP;

  -- Plan slots on the workspace row (locked: concurrent batches of any replica see each other's
  -- count, so the free plan's limit holds exactly), then that many numbers of the project.
  SELECT CASE WHEN plan = 'pro' THEN v_wanted ELSE least(v_wanted, greatest(p_free_task_limit - task_count, 0)) END
  INTO v_granted FROM workspaces WHERE id = p_workspace_id FOR NO KEY UPDATE;
  IF v_granted > 0 THEN
    UPDATE workspaces SET task_count = task_count + v_granted WHERE id = p_workspace_id;
    UPDATE projects SET next_task_number = next_task_number + v_granted
    WHERE workspace_id = p_workspace_id AND id = p_project_id
    RETURNING next_task_number - v_granted INTO v_first_number;
    SELECT coalesce(max(position) + 1, 0) INTO v_next_position FROM tasks WHERE section_id = p_section_id;
    SELECT id INTO v_status_id FROM statuses WHERE workspace_id = p_workspace_id AND system_type = 'todo';
  END IF;
  FOR i IN 1 .. v_count LOOP
    CONTINUE WHEN v_outcomes[i] IS NOT NULL;
    IF v_given < v_granted THEN
      v_outcomes[i] := 'created';
      v_numbers[i] := v_first_number + v_given;
      v_positions[i] := v_next_position + v_given;
      v_given := v_given + 1;
    ELSE
      v_outcomes[i] := 'plan_limit';
    END IF;
  END LOOP;

  IF v_given > 0 THEN
    INSERT INTO tasks (id, workspace_id, project_id, section_id, number, name, assignee_id, status_id, position, created_at)
    SELECT t.id, p_workspace_id, p_project_id, p_section_id, t.num, t.name, t.assignee_id, v_status_id, t.pos, t.created_at
    FROM unnest(p_ids, p_names, p_assignee_ids, p_created_at, v_numbers, v_positions) AS t(id, name, assignee_id, created_at, num, pos)
    WHERE t.num IS NOT NULL;
    INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, workspace_id, created_at, request_id)
    SELECT e.event_id, 'task', e.task_id::text, 'task.created',
      jsonb_set(jsonb_set(e.payload, '{data,number}', to_jsonb(e.num)), '{data,statusId}', coalesce(to_jsonb(v_status_id), 'null'::jsonb)),
      p_workspace_id, e.created_at, e.request_id
    FROM unnest(p_event_ids, p_ids, p_events, p_created_at, v_numbers, p_request_ids)
      AS e(event_id, task_id, payload, created_at, num, request_id)
    WHERE e.num IS NOT NULL;
  END IF;
  RETURN QUERY SELECT r.outcome, r.num FROM unnest(v_outcomes, v_numbers) WITH ORDINALITY AS r(outcome, num, ord) ORDER BY r.ord;
END;
$$;
