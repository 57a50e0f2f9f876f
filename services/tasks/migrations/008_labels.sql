-- Labels as people manage them in the app (issue #16 §3, tasks.v1.LabelsService). A label's name is
-- unique in its workspace, case-insensitively; no code path created labels before this migration,
-- but a duplicate (hand-made) is renamed first rather than failing the migration.
UPDATE labels l SET name = left(l.name, 40) || ' (' || d.n || ')'
FROM (SELECT id, row_number() OVER (PARTITION BY workspace_id, lower(name) ORDER BY id) AS n FROM labels) d
WHERE d.id = l.id AND d.n > 1;

CREATE UNIQUE INDEX labels_workspace_name_idx ON labels (workspace_id, lower(name));
