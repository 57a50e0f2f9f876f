-- A version of each project and section row, bumped by every change of what the API shows of it
-- (PATCH /v1/projects/:id, PATCH /v1/sections/:id) in the statement that writes the change. It is
-- the strong entity tag of GET /v1/projects/:id and GET /v1/sections/:id ("p<version>" / "s<version>"),
-- and an If-Match PATCH writes only while the row is still at a version it names (compared in the
-- UPDATE's WHERE, re-checked on the locked row: of concurrent PATCHes naming one version, one applies).
-- Not xmin: task writes update the project row too (list_version, next_task_number).
ALTER TABLE projects ADD COLUMN version bigint NOT NULL DEFAULT 1;
ALTER TABLE sections ADD COLUMN version bigint NOT NULL DEFAULT 1;
