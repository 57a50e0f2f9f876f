-- migrate: no-transaction
-- Re-renders the list JSON of the tasks written before migration 013 (adds their `updatedAt`), 1000
-- rows per transaction in primary-key order: each batch holds its rows' locks for milliseconds, never
-- the table, so the API keeps writing while a large database is migrated. Rows already rendered with
-- `updatedAt` (the last key) are skipped, so a re-run after an interruption only finishes the rest. `updated_at`
-- itself is not touched (assigning list_json fires the 005 trigger, which re-renders from the row).
DO $$
DECLARE
  v_last uuid := '00000000-0000-0000-0000-000000000000';
  v_next uuid;
BEGIN
  LOOP
    SELECT batch.id INTO v_next FROM (SELECT id FROM tasks WHERE id > v_last ORDER BY id LIMIT 1000) batch ORDER BY batch.id DESC LIMIT 1;
    EXIT WHEN v_next IS NULL;
    UPDATE tasks SET list_json = list_json
    WHERE id > v_last AND id <= v_next AND list_json !~ '"updatedAt":"[0-9T:.Z-]+"}$';
    v_last := v_next;
    COMMIT;
  END LOOP;
END
$$
