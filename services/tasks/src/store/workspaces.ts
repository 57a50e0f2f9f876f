import type { Member, Membership, Plan, Role, Status, SystemType, Workspace } from '../domain/model.js';
import type { Queryable } from '@tws/common';

interface WorkspaceRow {
  id: string;
  name: string;
  url_id: string;
  avatar_url: string | null;
  task_prefix: string;
  plan: Plan;
}

interface MemberRow {
  user_id: string;
  name: string;
  email: string;
  role: Role;
  avatar_url: string | null;
}

interface StatusRow {
  id: string;
  name: string;
  color: string;
  system_type: SystemType | null;
  position: number;
}

const toWorkspace = (row: WorkspaceRow): Workspace => ({
  id: row.id,
  name: row.name,
  urlId: row.url_id,
  avatarUrl: row.avatar_url,
  taskPrefix: row.task_prefix,
  plan: row.plan,
});

const toMember = (row: MemberRow): Member => ({
  userId: row.user_id,
  name: row.name,
  email: row.email,
  role: row.role,
  avatarUrl: row.avatar_url,
});

const toStatus = (row: StatusRow): Status => ({
  id: row.id,
  name: row.name,
  color: row.color,
  systemType: row.system_type,
  order: row.position,
});

const workspaceColumns = 'id, name, url_id, avatar_url, task_prefix, plan';

/** Inserts a workspace; null when the url id is taken (the caller draws another). */
export async function insertWorkspace(
  db: Queryable,
  input: { name: string; urlId: string; taskPrefix: string; plan: Plan },
): Promise<Workspace | null> {
  const { rows } = await db.query<WorkspaceRow>(
    `INSERT INTO workspaces (name, url_id, task_prefix, plan) VALUES ($1, $2, $3, $4)
     ON CONFLICT (url_id) DO NOTHING RETURNING ${workspaceColumns}`,
    [input.name, input.urlId, input.taskPrefix, input.plan],
  );
  return rows[0] ? toWorkspace(rows[0]) : null;
}

export async function getWorkspace(db: Queryable, id: string): Promise<Workspace | null> {
  const { rows } = await db.query<WorkspaceRow>({
    name: 'tasks-get-workspace',
    text: `SELECT ${workspaceColumns} FROM workspaces WHERE id = $1`,
    values: [id],
  });
  return rows[0] ? toWorkspace(rows[0]) : null;
}

/** The workspace's plan and the counters its limits apply to; null when there is no such workspace. */
export async function getPlanCounters(
  db: Queryable,
  id: string,
): Promise<{ plan: Plan; projectCount: number; taskCount: number } | null> {
  const { rows } = await db.query<{ plan: Plan; project_count: number; task_count: number }>({
    name: 'tasks-get-plan-counters',
    text: 'SELECT plan, project_count, task_count FROM workspaces WHERE id = $1',
    values: [id],
  });
  const row = rows[0];
  return row ? { plan: row.plan, projectCount: row.project_count, taskCount: row.task_count } : null;
}

/** Takes a project slot of the workspace's plan; false when the free plan is full (or no workspace). */
export async function takeProjectSlot(db: Queryable, workspaceId: string, freeLimit: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE workspaces SET project_count = project_count + 1
     WHERE id = $1 AND (plan = 'pro' OR project_count < $2)`,
    [workspaceId, freeLimit],
  );
  return rowCount === 1;
}

/** Finds the user with this (lower-cased) email or creates it; an existing user is kept as it is. */
export async function upsertUser(db: Queryable, input: { name: string; email: string }): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO users (name, email) VALUES ($1, $2)
     ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email
     RETURNING id`,
    [input.name, input.email],
  );
  return rows[0]!.id;
}

/** Adds a member; false when the user already is one. */
export async function insertMember(db: Queryable, workspaceId: string, userId: string, role: Role): Promise<boolean> {
  const { rowCount } = await db.query(
    'INSERT INTO members (workspace_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [workspaceId, userId, role],
  );
  return rowCount === 1;
}

/** The most memberships one person's lookup answers (a bound, far above any real person's count). */
export const maxMembershipsPerPerson = 1000;

/**
 * Every workspace of the user with this (lower-cased) email, with their role in each: users.email is
 * unique (one index probe), members by user_id (members_user_idx), workspaces by primary key.
 */
export async function listMembershipsByEmail(db: Queryable, email: string): Promise<Membership[]> {
  const { rows } = await db.query<WorkspaceRow & { user_id: string; role: Role }>({
    name: 'tasks-list-memberships-by-email',
    text: `SELECT w.id, w.name, w.url_id, w.avatar_url, w.task_prefix, w.plan, m.user_id, m.role
      FROM users u JOIN members m ON m.user_id = u.id JOIN workspaces w ON w.id = m.workspace_id
      WHERE u.email = $1 ORDER BY lower(w.name), w.url_id LIMIT $2`,
    values: [email, maxMembershipsPerPerson],
  });
  return rows.map((row) => ({ workspace: toWorkspace(row), userId: row.user_id, role: row.role }));
}

const memberSelect = `SELECT m.user_id, u.name, u.email, m.role, u.avatar_url
  FROM members m JOIN users u ON u.id = m.user_id`;

export async function getMember(db: Queryable, workspaceId: string, userId: string): Promise<Member | null> {
  const { rows } = await db.query<MemberRow>({
    name: 'tasks-get-member',
    text: `${memberSelect} WHERE m.workspace_id = $1 AND m.user_id = $2`,
    values: [workspaceId, userId],
  });
  return rows[0] ? toMember(rows[0]) : null;
}

export async function listMembers(db: Queryable, workspaceId: string): Promise<Member[]> {
  const { rows } = await db.query<MemberRow>({
    name: 'tasks-list-members',
    text: `${memberSelect} WHERE m.workspace_id = $1 ORDER BY m.created_at, u.name, m.user_id`,
    values: [workspaceId],
  });
  return rows.map(toMember);
}

export async function insertStatuses(
  db: Queryable,
  workspaceId: string,
  statuses: ReadonlyArray<{ name: string; color: string; systemType: SystemType | null }>,
): Promise<void> {
  await db.query(
    `INSERT INTO statuses (workspace_id, name, color, system_type, position)
     SELECT $1, s.name, s.color, s.system_type, s.ord - 1
     FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS s(name, color, system_type, ord)`,
    [
      workspaceId,
      statuses.map((status) => status.name),
      statuses.map((status) => status.color),
      statuses.map((status) => status.systemType),
    ],
  );
}

const statusColumns = 'id, name, color, system_type, position';

export async function listStatuses(db: Queryable, workspaceId: string): Promise<Status[]> {
  const { rows } = await db.query<StatusRow>({
    name: 'tasks-list-statuses',
    text: `SELECT ${statusColumns} FROM statuses WHERE workspace_id = $1 ORDER BY position, id`,
    values: [workspaceId],
  });
  return rows.map(toStatus);
}
