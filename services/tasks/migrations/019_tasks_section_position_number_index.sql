-- migrate: no-transaction
-- The task list's keyset pages (store/task-list-page.ts: the paged list and the streamed one) walk a
-- section from a cursor (position, number) in that order. tasks_section_position_idx covers
-- (section_id, position) only, so the walk could not start at the cursor: each page filtered every
-- task before it, and a page near the end of a 50,000-task section cost 20 ms instead of 3 (issue 21
-- item 1, bench/SCALE.md). This index is the list's order itself; the old one, its prefix, is dropped
-- by 020. Built CONCURRENTLY (no lock that blocks the API's writes), IF NOT EXISTS so an interrupted
-- run can be repeated.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_section_position_number_idx ON tasks (section_id, position, number);
