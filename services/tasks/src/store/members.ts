import type { Queryable } from '@tws/common';
import type { Member, Role } from '../domain/model.js';

/** A member as the workspace settings list them: who, their role, and when they joined. */
export interface MemberSummary {
  member: Member;
  joinedAt: Date;
}

interface SummaryRow {
  user_id: string;
  name: string;
  email: string;
  role: Role;
  avatar_url: string | null;
  created_at: Date;
}

const toSummary = (row: SummaryRow): MemberSummary => ({
  member: { userId: row.user_id, name: row.name, email: row.email, role: row.role, avatarUrl: row.avatar_url },
  joinedAt: row.created_at,
});

const summarySelect = `SELECT m.user_id, u.name, u.email, m.role, u.avatar_url, m.created_at
  FROM members m JOIN users u ON u.id = m.user_id`;

/** The members of a workspace in the order they joined, at most `limit`. */
export async function listMemberSummaries(db: Queryable, workspaceId: string, limit: number): Promise<MemberSummary[]> {
  const { rows } = await db.query<SummaryRow>({
    name: 'tasks-list-member-summaries',
    text: `${summarySelect} WHERE m.workspace_id = $1 ORDER BY m.created_at, u.name, m.user_id LIMIT $2`,
    values: [workspaceId, limit],
  });
  return rows.map(toSummary);
}

/** One member (locked until the transaction ends when `lock`: a concurrent assignment to them waits). */
export async function getMemberSummary(db: Queryable, workspaceId: string, userId: string, lock = false): Promise<MemberSummary | null> {
  const { rows } = await db.query<SummaryRow>({
    name: lock ? 'tasks-lock-member-summary' : 'tasks-get-member-summary',
    text: `${summarySelect} WHERE m.workspace_id = $1 AND m.user_id = $2${lock ? ' FOR UPDATE OF m' : ''}`,
    values: [workspaceId, userId],
  });
  return rows[0] ? toSummary(rows[0]) : null;
}

/**
 * Serialises the membership changes of one workspace until the transaction ends (a transaction-level
 * advisory lock: the workspace row itself stays free for the plan counters of task and project writes),
 * so two owners demoting each other at once cannot leave the workspace without an owner.
 */
export async function lockMembershipChanges(db: Queryable, workspaceId: string): Promise<void> {
  await db.query({ name: 'tasks-lock-membership-changes', text: "SELECT pg_advisory_xact_lock(hashtext('members:' || $1::text))", values: [workspaceId] });
}

export async function countOwners(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>({
    name: 'tasks-count-owners',
    text: "SELECT count(*)::int AS n FROM members WHERE workspace_id = $1 AND role = 'owner'",
    values: [workspaceId],
  });
  return rows[0]?.n ?? 0;
}

export async function updateMemberRole(db: Queryable, workspaceId: string, userId: string, role: Role): Promise<void> {
  await db.query({
    name: 'tasks-update-member-role',
    text: 'UPDATE members SET role = $3 WHERE workspace_id = $1 AND user_id = $2',
    values: [workspaceId, userId, role],
  });
}

/** Revokes every live key a member created in the workspace; how many. */
export async function revokeMemberApiKeys(db: Queryable, workspaceId: string, userId: string): Promise<number> {
  const { rowCount } = await db.query({
    name: 'tasks-revoke-member-api-keys',
    text: 'UPDATE api_keys SET revoked_at = now() WHERE workspace_id = $1 AND user_id = $2 AND revoked_at IS NULL',
    values: [workspaceId, userId],
  });
  return rowCount ?? 0;
}

/** Deletes a membership; their API keys go with it (api_keys → members ON DELETE CASCADE). */
export async function deleteMember(db: Queryable, workspaceId: string, userId: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'tasks-delete-member',
    text: 'DELETE FROM members WHERE workspace_id = $1 AND user_id = $2',
    values: [workspaceId, userId],
  });
  return rowCount === 1;
}
