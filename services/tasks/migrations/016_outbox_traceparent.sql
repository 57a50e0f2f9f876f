-- Traces (README "Traces"): the outbox keeps the W3C trace context (`traceparent`) of the gRPC call
-- that made a change beside its event; the relay starts the Kafka record's span under it and sends
-- the record's context as the Kafka header `traceparent`, so the webhooks service's deliveries join
-- the trace of the request. Null when tracing is off or the change was made outside a traced call.
ALTER TABLE outbox ADD COLUMN traceparent text;

-- create_tasks with one more argument, p_traceparents[i] = item i's trace context: the eleven-argument
-- version (migration 010) creates the tasks and their events, then the created events get their
-- trace context, in the same statement. Only traced calls pay for that update (all-null arrays
-- skip it). The eleven-argument version stays for replicas of the previous release.
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
  p_request_ids text[],
  p_traceparents text[]
) RETURNS TABLE (item_outcome text, item_number integer) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT c.item_outcome, c.item_number FROM create_tasks(p_workspace_id, p_project_id, p_section_id,
    p_free_task_limit, p_ids, p_names, p_assignee_ids, p_created_at, p_event_ids, p_events, p_request_ids) AS c;
  IF EXISTS (SELECT FROM unnest(p_traceparents) AS t(tp) WHERE t.tp IS NOT NULL) THEN
    UPDATE outbox o SET traceparent = t.tp
    FROM unnest(p_event_ids, p_traceparents) AS t(id, tp)
    WHERE o.id = t.id AND t.tp IS NOT NULL;
  END IF;
END;
$$;
