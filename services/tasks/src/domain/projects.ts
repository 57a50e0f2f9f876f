import { DomainError, forbidden, inTransaction, invalid, notFound, recordAudit, type Pool, type Queryable } from '@tws/common';
import {
  getProject as getProjectRow,
  getSection as getSectionRow,
  insertProject,
  insertSectionAtEnd,
  listProjects as listProjectRows,
  listSections as listSectionRows,
  lockProject,
  prefixesLike,
  projectExists,
  updateProject as updateProjectRow,
  sectionExists,
  updateSectionName,
  type VersionCondition,
} from '../store/projects.js';
import { takeProjectSlot } from '../store/workspaces.js';
import { deriveTaskPrefix, firstFreePrefix } from './identifiers.js';
import { defaultSectionName, freePlanLimits, type Project, type Section } from './model.js';
import { rowTagOf, versionsOfTags, type RowKind } from './row-tags.js';
import { ifMatchTags, pathId, requiredText } from './validation.js';
import { getWorkspace } from './workspaces.js';

/** An optional project description: an empty string is stored as null (as for tasks). */
function optionalDescription(value: string | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (value.length > 10_000) throw invalid('description must be at most 10000 characters');
  return value === '' ? null : value;
}

export async function listProjects(pool: Queryable, workspaceId: string): Promise<Project[]> {
  const id = pathId(workspaceId, 'workspace');
  const projects = await listProjectRows(pool, id);
  if (projects.length === 0) await getWorkspace(pool, id);
  return projects;
}

/**
 * A project with its default `To Do` section. The free plan's project limit is taken with a
 * conditional counter UPDATE on the workspace row in the same transaction, so concurrent creations
 * cannot overshoot it; that row lock also serialises the choice of a unique task prefix.
 */
export async function createProject(
  pool: Pool,
  input: { workspaceId: string; name: string; description?: string | undefined },
): Promise<{ id: string; defaultListId: string }> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const name = requiredText(input.name, 'name', 200);
  const description = optionalDescription(input.description) ?? null;
  return inTransaction(pool, async (db) => {
    if (!(await takeProjectSlot(db, workspaceId, freePlanLimits.projects))) {
      await getWorkspace(db, workspaceId);
      throw forbidden(`free plan limit reached: ${freePlanLimits.projects} projects`);
    }
    const base = deriveTaskPrefix(name, 'P');
    const taskPrefix = firstFreePrefix(base, await prefixesLike(db, workspaceId, base));
    const id = await insertProject(db, { workspaceId, name, description, taskPrefix });
    const defaultListId = await insertSectionAtEnd(db, { workspaceId, projectId: id, name: defaultSectionName });
    await recordAudit(db, { workspaceId, action: 'project.created', resourceType: 'project', resourceId: id });
    return { id, defaultListId };
  });
}

/** The versions an If-Match names (null: no condition, as for no tags or `*`). */
function conditionOf(kind: RowKind, tags: readonly string[] | undefined): VersionCondition {
  const bounded = ifMatchTags(tags);
  return bounded.length === 0 ? null : versionsOfTags(kind, bounded);
}

/** A conditional write wrote nothing: 404 when the row does not exist, else its If-Match failed. */
async function notWritten(exists: () => Promise<boolean>, what: RowKind): Promise<never> {
  if (!(await exists())) throw notFound(`${what} not found`);
  throw new DomainError('aborted', `the ${what} changed since the If-Match entity tag was read; GET it again`);
}

export async function getProject(pool: Queryable, workspaceId: string, id: string): Promise<Project> {
  const project = await getProjectRow(pool, pathId(workspaceId, 'workspace'), pathId(id, 'project'));
  if (!project) throw notFound('project not found');
  return project;
}

export async function getSection(pool: Queryable, workspaceId: string, id: string): Promise<Section> {
  const section = await getSectionRow(pool, pathId(workspaceId, 'workspace'), pathId(id, 'section'));
  if (!section) throw notFound('section not found');
  return section;
}

export const projectTagOf = (project: Pick<Project, 'version'>): string => rowTagOf('project', project.version);
export const sectionTagOf = (section: Pick<Section, 'version'>): string => rowTagOf('section', section.version);

/**
 * Changes a project; with `ifMatch` tags, only while it is at a version one of them names (checked in
 * the writing statement), else ABORTED and nothing written. Returns its entity tag afterwards.
 */
export async function updateProject(
  pool: Pool,
  input: {
    workspaceId: string;
    id: string;
    name?: string | undefined;
    description?: string | undefined;
    clearDescription: boolean;
    ifMatch?: readonly string[] | undefined;
  },
): Promise<{ id: string; entityTag: string }> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const id = pathId(input.id, 'project');
  if (input.description !== undefined && input.clearDescription) {
    throw invalid('description and clearDescription cannot both be set');
  }
  const changes: { name?: string; description?: string | null } = {};
  if (input.name !== undefined) changes.name = requiredText(input.name, 'name', 200);
  if (input.clearDescription) changes.description = null;
  else if (input.description !== undefined) changes.description = optionalDescription(input.description) ?? null;
  if (Object.keys(changes).length === 0) throw invalid('no fields to update');
  const versions = conditionOf('project', input.ifMatch);
  const version = await inTransaction(pool, async (db) => {
    const written = await updateProjectRow(db, workspaceId, id, changes, versions);
    if (written !== null) {
      await recordAudit(db, { workspaceId, action: 'project.updated', resourceType: 'project', resourceId: id.toLowerCase(), changes: Object.keys(changes) });
    }
    return written;
  });
  if (version === null) {
    if (versions === null) throw notFound('project not found');
    return notWritten(() => projectExists(pool, workspaceId, id), 'project');
  }
  return { id, entityTag: rowTagOf('project', version) };
}

export async function listSections(pool: Queryable, workspaceId: string, projectId: string): Promise<Section[]> {
  const ws = pathId(workspaceId, 'workspace');
  const project = pathId(projectId, 'project');
  const sections = await listSectionRows(pool, ws, project);
  if (sections.length === 0 && !(await projectExists(pool, ws, project))) throw notFound('project not found');
  return sections;
}

/** A section at the end of its project (the project row lock makes max + 1 race-free). */
export async function createSection(
  pool: Pool,
  input: { workspaceId: string; projectId: string; name: string },
): Promise<{ id: string }> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const projectId = pathId(input.projectId, 'project');
  const name = requiredText(input.name, 'name', 200);
  return inTransaction(pool, async (db) => {
    if (!(await lockProject(db, workspaceId, projectId))) throw notFound('project not found');
    const id = await insertSectionAtEnd(db, { workspaceId, projectId, name });
    await recordAudit(db, { workspaceId, action: 'section.created', resourceType: 'section', resourceId: id });
    return { id };
  });
}

/** Renames a section; `ifMatch` as for {@link updateProject}. */
export async function updateSection(
  pool: Pool,
  input: { workspaceId: string; id: string; name: string; ifMatch?: readonly string[] | undefined },
): Promise<Section> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const id = pathId(input.id, 'section');
  const name = requiredText(input.name, 'name', 200);
  const versions = conditionOf('section', input.ifMatch);
  const section = await inTransaction(pool, async (db) => {
    const written = await updateSectionName(db, workspaceId, id, name, versions);
    if (written) await recordAudit(db, { workspaceId, action: 'section.updated', resourceType: 'section', resourceId: written.id, changes: ['name'] });
    return written;
  });
  if (section) return section;
  if (versions === null) throw notFound('section not found');
  return notWritten(() => sectionExists(pool, workspaceId, id), 'section');
}
