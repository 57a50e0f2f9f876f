-- migrate: no-transaction
-- `GET /v1/projects/:projectId/tasks?updatedSince=` (incremental sync): the tasks of a project changed
-- since a time, found through this index instead of every task of the project. Built CONCURRENTLY:
-- writes go on while it is built. (The paged list walks sections_project_position_idx and, per
-- section, tasks_section_position_idx in display order; see store/task-list-page.ts.)
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_project_updated_idx ON tasks (project_id, updated_at)
