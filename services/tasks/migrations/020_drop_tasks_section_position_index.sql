-- migrate: no-transaction
-- tasks_section_position_idx (section_id, position) is a prefix of 019's index, which serves every
-- statement it served (a section's last position, its tasks in order). Dropped CONCURRENTLY: no lock
-- that blocks the API's reads or writes.
DROP INDEX CONCURRENTLY IF EXISTS tasks_section_position_idx;
