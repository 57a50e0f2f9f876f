// Sizes seeded straight into the tasks schema with generated SQL (not through the API: 1,000,000
// tasks through POST /v1/tasks would take hours). Every row goes through the same triggers as an
// API write, so what migrations 005/006/013 maintain stays consistent: each task's list_json (its
// list-shape JSON), the project's list_version; the counters the store keeps by hand are set in the
// same transaction (workspaces.task_count, projects.next_task_number). Task numbers and positions
// continue where the project stands, so tasks created through the API afterwards fit in.
import pg from 'pg';
import { onCleanup } from '../lib/cleanup.mjs';
import { log } from '../lib/log.mjs';

/** A client of the stack's database with the tasks schema first on its search path. */
export async function tasksDb(stack) {
  const db = new pg.Client({ connectionString: stack.infra.databaseUrl, application_name: 'bench-scale' });
  await db.connect();
  onCleanup(() => db.end());
  await db.query('SET search_path TO tasks, public');
  return db;
}

/** What a seeded task copies from a task written through the API: its description (rich text as the service stores it) and status. */
export async function templateOf(db, taskId) {
  const { rows } = await db.query('SELECT description::text AS description, status_id, workspace_id FROM tasks WHERE id = $1', [taskId]);
  if (!rows[0]?.description) throw new Error(`template task ${taskId} has no description`);
  return { description: rows[0].description, statusId: rows[0].status_id, workspaceId: rows[0].workspace_id };
}

/**
 * Appends `count` tasks to a section of a project (one transaction, in chunks of 25,000 rows):
 * numbers after the project's last, positions after the section's last, every third task with the
 * template's description, every second assigned to `assigneeId`.
 */
export async function seedProjectTasks(db, { workspaceId, projectId, sectionId, count, template, assigneeId = null }) {
  const chunk = 25_000;
  await db.query('BEGIN');
  try {
    for (let done = 0; done < count; done += chunk) {
      const n = Math.min(chunk, count - done);
      const { rows } = await db.query(
        'UPDATE projects SET next_task_number = next_task_number + $3 WHERE workspace_id = $1 AND id = $2 RETURNING next_task_number - $3 AS first',
        [workspaceId, projectId, n],
      );
      if (!rows[0]) throw new Error(`no project ${projectId} in workspace ${workspaceId}`);
      await db.query(
        `INSERT INTO tasks (workspace_id, project_id, section_id, number, name, position, status_id, assignee_id, description)
         SELECT $1, $2, $3, $4 + g - 1, 'Scale task ' || ($4 + g - 1) || ': write the quarterly report',
                (SELECT coalesce(max(position) + 1, 0) FROM tasks WHERE section_id = $3) + g - 1,
                $5, CASE WHEN g % 2 = 0 THEN $6::uuid END, CASE WHEN g % 3 = 1 THEN $7::jsonb END
         FROM generate_series(1, $8::int) g`,
        [workspaceId, projectId, sectionId, rows[0].first, template.statusId, assigneeId, template.description, n],
      );
      await db.query('UPDATE workspaces SET task_count = task_count + $2 WHERE id = $1', [workspaceId, n]);
    }
    await db.query('COMMIT');
  } catch (error) {
    await db.query('ROLLBACK');
    throw error;
  }
}

/** One chunk of {@link seedWorkspaces}: `from`..`to - 1` workspaces in one transaction. */
async function seedWorkspaceChunk(db, { tag, from, to, tasksPerWorkspace, template, sectionName }) {
  await db.query('BEGIN');
  try {
    await db.query(
      `CREATE TEMP TABLE seed_ws ON COMMIT DROP AS
       SELECT i, gen_random_uuid() AS ws, gen_random_uuid() AS usr, gen_random_uuid() AS proj, gen_random_uuid() AS sec,
              gen_random_uuid() AS todo
       FROM generate_series($1::int, $2::int - 1) i`,
      [from, to],
    );
    await db.query(`INSERT INTO users (id, name, email) SELECT usr, 'Scale user ' || i, 'scale-' || $1 || '-' || i || '@bench.test' FROM seed_ws`, [tag]);
    await db.query(
      `INSERT INTO workspaces (id, name, url_id, task_prefix, plan, project_count, task_count)
       SELECT ws, 'Scale ' || i, 'scale-' || $1 || '-' || i, 'S', 'pro', 1, $2 FROM seed_ws`,
      [tag, tasksPerWorkspace],
    );
    await db.query(`INSERT INTO members (workspace_id, user_id, role) SELECT ws, usr, 'owner' FROM seed_ws`);
    // The statuses of the template workspace (the defaults a workspace gets), the `todo` one with a known id.
    await db.query(
      `INSERT INTO statuses (id, workspace_id, name, color, system_type, position)
       SELECT CASE WHEN st.system_type = 'todo' THEN s.todo ELSE gen_random_uuid() END, s.ws, st.name, st.color, st.system_type, st.position
       FROM seed_ws s CROSS JOIN (SELECT * FROM statuses WHERE workspace_id = $1) st`,
      [template.workspaceId],
    );
    await db.query(
      `INSERT INTO projects (id, workspace_id, name, task_prefix, next_task_number) SELECT proj, ws, 'Scale project', 'SCL', $1 + 1 FROM seed_ws`,
      [tasksPerWorkspace],
    );
    await db.query(`INSERT INTO sections (id, workspace_id, project_id, name, position) SELECT sec, ws, proj, $1, 0 FROM seed_ws`, [sectionName]);
    await db.query(
      `INSERT INTO tasks (workspace_id, project_id, section_id, number, name, position, status_id, assignee_id, description)
       SELECT s.ws, s.proj, s.sec, g, 'Scale task ' || g || ': write the quarterly report', g - 1, s.todo,
              CASE WHEN g % 2 = 0 THEN s.usr END, CASE WHEN g % 3 = 1 THEN $2::jsonb END
       FROM seed_ws s CROSS JOIN generate_series(1, $1::int) g`,
      [tasksPerWorkspace, template.description],
    );
    // A comment on every tenth task (the comment statements then read a table of real size).
    await db.query(
      `INSERT INTO comments (workspace_id, task_id, body, author_user_id, author_name)
       SELECT t.workspace_id, t.id, $1::jsonb, s.usr, 'Scale user ' || s.i
       FROM seed_ws s JOIN tasks t ON t.workspace_id = s.ws AND t.project_id = s.proj WHERE t.number % 10 = 0`,
      [template.description],
    );
    await db.query('COMMIT');
  } catch (error) {
    await db.query('ROLLBACK');
    throw error;
  }
}

/**
 * `workspaces` pro workspaces of one owner, one project and one section each, `tasksPerWorkspace`
 * tasks each, in transactions of 100 workspaces; stops early (and says so) at `deadline` (ms since
 * the epoch). The tables are vacuumed and analysed afterwards, as autovacuum would have by then.
 */
export async function seedWorkspaces(db, { workspaces, tasksPerWorkspace, template, deadline }) {
  const { rows } = await db.query('SELECT name FROM sections WHERE workspace_id = $1 ORDER BY position LIMIT 1', [template.workspaceId]);
  const sectionName = rows[0]?.name ?? 'To do';
  const tag = Date.now().toString(36);
  const chunk = 100;
  const started = Date.now();
  let seeded = 0;
  for (let from = 0; from < workspaces; from += chunk) {
    if (Date.now() > deadline) {
      log(`db: seeding stopped at the deadline: ${seeded} of ${workspaces} workspaces`);
      break;
    }
    const to = Math.min(workspaces, from + chunk);
    await seedWorkspaceChunk(db, { tag, from, to, tasksPerWorkspace, template, sectionName });
    seeded = to;
    const seconds = (Date.now() - started) / 1000;
    log(`db: seeded ${seeded}/${workspaces} workspaces (${seeded * tasksPerWorkspace} tasks) in ${seconds.toFixed(0)} s`);
  }
  const seedSeconds = (Date.now() - started) / 1000;
  const vacuumStarted = Date.now();
  for (const table of ['tasks', 'comments', 'projects', 'sections', 'statuses', 'members', 'workspaces', 'users']) await db.query(`VACUUM (ANALYZE) ${table}`);
  return { workspaces: seeded, tasks: seeded * tasksPerWorkspace, seedSeconds, vacuumSeconds: (Date.now() - vacuumStarted) / 1000 };
}
