import type { Project, Section } from '../domain/model.js';
import type { Queryable } from '@tws/common';

interface ProjectRow {
  id: string;
  name: string;
  description: string | null;
  task_prefix: string;
  version: string;
}

interface SectionRow {
  id: string;
  name: string;
  position: number;
  project_id: string;
  version: string;
}

const toProject = (row: ProjectRow): Project => ({
  id: row.id,
  name: row.name,
  description: row.description,
  taskPrefix: row.task_prefix,
  version: row.version,
});

const toSection = (row: SectionRow): Section => ({
  id: row.id,
  name: row.name,
  order: row.position,
  projectId: row.project_id,
  version: row.version,
});

const projectColumns = 'id, name, description, task_prefix, version::text AS version';

export async function listProjects(db: Queryable, workspaceId: string): Promise<Project[]> {
  const { rows } = await db.query<ProjectRow>({
    name: 'tasks-list-projects',
    text: `SELECT ${projectColumns} FROM projects WHERE workspace_id = $1 ORDER BY created_at, id`,
    values: [workspaceId],
  });
  return rows.map(toProject);
}

export async function projectExists(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'tasks-project-exists',
    text: 'SELECT 1 FROM projects WHERE workspace_id = $1 AND id = $2',
    values: [workspaceId, id],
  });
  return rowCount === 1;
}

/** Locks the project row (serialises section creation in it); false when there is no such project. */
export async function lockProject(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'SELECT 1 FROM projects WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE',
    [workspaceId, id],
  );
  return rowCount === 1;
}

/** Prefixes of the workspace's projects that are `base` followed by digits (or `base` itself). */
export async function prefixesLike(db: Queryable, workspaceId: string, base: string): Promise<Set<string>> {
  const { rows } = await db.query<{ task_prefix: string }>(
    `SELECT task_prefix FROM projects WHERE workspace_id = $1 AND task_prefix ~ ('^' || $2 || '[0-9]*$')`,
    [workspaceId, base],
  );
  return new Set(rows.map((row) => row.task_prefix));
}

export async function insertProject(
  db: Queryable,
  input: { workspaceId: string; name: string; description: string | null; taskPrefix: string },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO projects (workspace_id, name, description, task_prefix) VALUES ($1, $2, $3, $4) RETURNING id',
    [input.workspaceId, input.name, input.description, input.taskPrefix],
  );
  return rows[0]!.id;
}

/**
 * `versions` of an If-Match: the row is written only while at one of them (null: unconditional).
 * The condition is in the UPDATE's WHERE, which Postgres re-checks on the locked row when another
 * statement changed it meanwhile: of concurrent writes naming one version, exactly one applies.
 */
export type VersionCondition = readonly string[] | null;

/**
 * Changes name and/or description (`undefined` = unchanged) and bumps the version; the new version,
 * or null when there is no such project or it is not at a version of `versions` (nothing written).
 */
export async function updateProject(
  db: Queryable,
  workspaceId: string,
  id: string,
  changes: { name?: string; description?: string | null },
  versions: VersionCondition,
): Promise<string | null> {
  const { rows } = await db.query<{ version: string }>(
    `UPDATE projects SET
       name = CASE WHEN $3 THEN $4 ELSE name END,
       description = CASE WHEN $5 THEN $6 ELSE description END,
       version = version + 1
     WHERE workspace_id = $1 AND id = $2 AND ($7::bigint[] IS NULL OR version = ANY($7::bigint[]))
     RETURNING version::text AS version`,
    [
      workspaceId,
      id,
      changes.name !== undefined,
      changes.name ?? null,
      changes.description !== undefined,
      changes.description ?? null,
      versions,
    ],
  );
  return rows[0]?.version ?? null;
}

export async function getProject(db: Queryable, workspaceId: string, id: string): Promise<Project | null> {
  const { rows } = await db.query<ProjectRow>({
    name: 'tasks-get-project',
    text: `SELECT ${projectColumns} FROM projects WHERE workspace_id = $1 AND id = $2`,
    values: [workspaceId, id],
  });
  return rows[0] ? toProject(rows[0]) : null;
}

const sectionColumns = 'id, name, position, project_id, version::text AS version';

export async function listSections(db: Queryable, workspaceId: string, projectId: string): Promise<Section[]> {
  const { rows } = await db.query<SectionRow>({
    name: 'tasks-list-sections',
    text: `SELECT ${sectionColumns} FROM sections WHERE workspace_id = $1 AND project_id = $2 ORDER BY position, created_at, id`,
    values: [workspaceId, projectId],
  });
  return rows.map(toSection);
}

/** Appends a section (position = max + 1); the caller holds the project row lock. */
export async function insertSectionAtEnd(
  db: Queryable,
  input: { workspaceId: string; projectId: string; name: string },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO sections (workspace_id, project_id, name, position)
     SELECT $1, $2, $3, coalesce(max(position) + 1, 0) FROM sections WHERE project_id = $2
     RETURNING id`,
    [input.workspaceId, input.projectId, input.name],
  );
  return rows[0]!.id;
}

/** Renames a section and bumps its version; null when there is none or it is not at one of `versions`. */
export async function updateSectionName(
  db: Queryable,
  workspaceId: string,
  id: string,
  name: string,
  versions: VersionCondition,
): Promise<Section | null> {
  const { rows } = await db.query<SectionRow>(
    `UPDATE sections SET name = $3, version = version + 1
     WHERE workspace_id = $1 AND id = $2 AND ($4::bigint[] IS NULL OR version = ANY($4::bigint[]))
     RETURNING ${sectionColumns}`,
    [workspaceId, id, name, versions],
  );
  return rows[0] ? toSection(rows[0]) : null;
}

export async function sectionExists(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM sections WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  return rowCount === 1;
}

export async function getSection(db: Queryable, workspaceId: string, id: string): Promise<Section | null> {
  const { rows } = await db.query<SectionRow>({
    name: 'tasks-get-section',
    text: `SELECT ${sectionColumns} FROM sections WHERE workspace_id = $1 AND id = $2`,
    values: [workspaceId, id],
  });
  return rows[0] ? toSection(rows[0]) : null;
}

/**
 * Locks a section of the project (serialises appends of tasks to it); false when the project has no
 * such section.
 */
export async function lockSection(db: Queryable, projectId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'tasks-lock-section',
    text: 'SELECT 1 FROM sections WHERE project_id = $1 AND id = $2 FOR NO KEY UPDATE',
    values: [projectId, id],
  });
  return rowCount === 1;
}

export async function sectionInProject(db: Queryable, projectId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'tasks-section-in-project',
    text: 'SELECT 1 FROM sections WHERE project_id = $1 AND id = $2',
    values: [projectId, id],
  });
  return rowCount === 1;
}
