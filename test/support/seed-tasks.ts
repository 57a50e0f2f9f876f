import type pg from 'pg';

export interface SeedTasks {
  workspaceId: string;
  projectId: string;
  /** The sections the tasks go to, round robin. */
  sectionIds: readonly string[];
  count: number;
  /** Every `describedEvery`-th task gets a description of about `descriptionBytes` (0: none). */
  describedEvery?: number;
  descriptionBytes?: number;
  statusId?: string | null;
}

/**
 * Inserts `count` tasks into a project with one statement, as the API would have created them
 * (numbers after the project's last, positions after each section's last, the workspace's task
 * count), without `count` API calls: the rows' triggers render their list JSON and bump the list
 * version as for any write. Names and descriptions carry characters JSON escapes. No events.
 */
export async function seedTasks(db: pg.Client, seed: SeedTasks): Promise<void> {
  const { rows } = await db.query<{ inserted: number }>(
    `WITH numbers AS (
       UPDATE projects SET next_task_number = next_task_number + $4::int
       WHERE workspace_id = $1 AND id = $2 RETURNING next_task_number - $4::int AS first
     ), sections AS (
       SELECT s.id, s.ord, coalesce((SELECT max(t.position) FROM tasks t WHERE t.section_id = s.id), 0) AS last
       FROM unnest($3::uuid[]) WITH ORDINALITY AS s (id, ord)
     ), inserted AS (
       INSERT INTO tasks (workspace_id, project_id, section_id, number, name, status_id, position, description)
       SELECT $1, $2, s.id, numbers.first + g - 1, 'Seeded "' || g || E'" \\\\ ✓ 🧪', $7::uuid, s.last + (g + cardinality($3::uuid[]) - 1) / cardinality($3::uuid[]),
              CASE WHEN $5::int > 0 AND g % $5::int = 0 THEN jsonb_build_array(jsonb_build_object('type', 'paragraph', 'children',
                jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'Line "' || g || E'"\\n' || repeat('é', $6::int / 2))))) END
       FROM numbers, generate_series(1, $4::int) g
         JOIN sections s ON s.ord = (g - 1) % cardinality($3::uuid[]) + 1
       RETURNING 1
     ), counted AS (
       UPDATE workspaces SET task_count = task_count + (SELECT count(*) FROM inserted) WHERE id = $1
     )
     SELECT count(*)::int AS inserted FROM inserted`,
    [seed.workspaceId, seed.projectId, seed.sectionIds, seed.count, seed.describedEvery ?? 0, seed.descriptionBytes ?? 0, seed.statusId ?? null],
  );
  if (rows[0]?.inserted !== seed.count) throw new Error(`seeded ${rows[0]?.inserted} tasks, not ${seed.count}`);
}

/**
 * The whole list as the tasks service renders a list of one message (store/task-json.ts
 * renderTaskList): every task's list JSON in display order, in one statement.
 */
export async function renderedList(db: pg.Client, projectId: string): Promise<{ json: string; version: string }> {
  const { rows } = await db.query<{ json: string; version: string }>(
    `SELECT p.list_version::text AS version, '[' || coalesce((
        SELECT string_agg(t.list_json, ',' ORDER BY s.position, s.created_at, s.id, t.position, t.number)
        FROM tasks t JOIN sections s ON s.id = t.section_id WHERE t.project_id = p.id), '') || ']' AS json
     FROM projects p WHERE p.id = $1`,
    [projectId],
  );
  return rows[0]!;
}
