import { auditRecord, DomainError, forbidden, notFound, recordAudit, type Pool, type Queryable } from '@tws/common';
import {
  countOwners,
  deleteMember,
  getMemberSummary,
  listMemberSummaries,
  lockMembershipChanges,
  revokeMemberApiKeys,
  updateMemberRole,
  type MemberSummary,
} from '../store/members.js';
import { lockTasksAssignedTo, writeTaskChanges, type TaskWrite } from '../store/task-changes.js';
import type { ActingPerson } from './api-key-settings.js';
import type { Member, Role } from './model.js';
import type { Confirmation, Revocations } from './revocation-publisher.js';
import { membershipEnded } from './revocations.js';
import { buildTaskEvent } from './task-event.js';
import { planTaskUpdate } from './task-update.js';
import { pathId } from './validation.js';
import { addMember, normaliseEmail } from './workspaces.js';

/**
 * The members part of the workspace settings, for a signed-in person (SettingsService, called by
 * services/web):
 * - owners and members list the members; guests are refused (PERMISSION_DENIED), someone who is not
 *   a member (or a workspace that does not exist) is NOT_FOUND, as for every settings call;
 * - only owners add a member (by email and role), change a role or remove a member;
 * - a workspace always keeps an owner: demoting or removing the last one is FAILED_PRECONDITION;
 * - a removal unassigns the member's tasks (each emits `task.updated` through the outbox, like a
 *   PATCH), deletes the membership (their API keys go with it) and pushes a membership revocation
 *   to every gateway, waiting for their acknowledgements like RevokeApiKey; a role change pushes the
 *   same notice (the gateways drop what they cached about the member), and a demotion to guest
 *   revokes the member's keys (guests hold none).
 */

/** The most members one list answers. */
export const maxListedMembers = 500;
/** Tasks unassigned per statement when a member is removed (all of them, in batches of this size). */
export const unassignBatchSize = 500;

export const guestsRefused = 'guests cannot see or manage the members of a workspace';
export const ownersOnly = 'only owners can add, change or remove members';
export const lastOwner = 'the workspace must keep at least one owner: make another member an owner first';

async function actingMember(db: Queryable, acting: ActingPerson): Promise<Member> {
  const member = (await getMemberSummary(db, pathId(acting.workspaceId, 'workspace'), pathId(acting.userId, 'member')))?.member;
  if (!member) throw notFound('user is not a member of this workspace');
  if (member.role === 'guest') throw forbidden(guestsRefused);
  return member;
}

async function actingOwner(db: Queryable, acting: ActingPerson): Promise<Member> {
  const member = await actingMember(db, acting);
  if (member.role !== 'owner') throw forbidden(ownersOnly);
  return member;
}

/** The name of a person first added by email: the address's local part ("ada.l" of ada.l@example.com). */
export function nameFromEmail(email: string): string {
  const local = email.slice(0, email.lastIndexOf('@'));
  return (local || email).slice(0, 200);
}

export async function listWorkspaceMembers(pool: Pool, acting: ActingPerson): Promise<{ members: MemberSummary[]; truncated: boolean }> {
  await actingMember(pool, acting);
  const rows = await listMemberSummaries(pool, acting.workspaceId.toLowerCase(), maxListedMembers + 1);
  return { members: rows.slice(0, maxListedMembers), truncated: rows.length > maxListedMembers };
}

/** Adds a person by email through the admin CLI's path (owners only); ALREADY_EXISTS when they are a member. */
export async function addWorkspaceMember(pool: Pool, acting: ActingPerson, email: string, role: Role): Promise<MemberSummary> {
  const normalised = normaliseEmail(email);
  const workspaceId = pathId(acting.workspaceId, 'workspace');
  const member = await addMember(pool, { workspaceId, email: normalised, name: nameFromEmail(normalised), role }, async (db) => {
    await actingOwner(db, acting);
  });
  const summary = await getMemberSummary(pool, workspaceId, member.userId);
  if (!summary) throw notFound('member not found');
  return summary;
}

/** The member a change names, locked; NOT_FOUND when the workspace has no such member. */
async function lockTarget(db: Queryable, workspaceId: string, userId: string): Promise<MemberSummary> {
  const target = await getMemberSummary(db, workspaceId, userId, true);
  if (!target) throw notFound('member not found');
  return target;
}

async function keepAnOwner(db: Queryable, workspaceId: string, target: Member): Promise<void> {
  if (target.role === 'owner' && (await countOwners(db, workspaceId)) <= 1) throw new DomainError('failed_precondition', lastOwner);
}

export async function changeMemberRole(
  pool: Pool,
  revocations: Revocations,
  acting: ActingPerson,
  userId: string,
  role: Role,
): Promise<{ member: MemberSummary; revokedApiKeys: number; confirmation: Confirmation }> {
  const workspaceId = pathId(acting.workspaceId, 'workspace');
  const targetId = pathId(userId, 'member');
  let changed: MemberSummary | undefined;
  let revokedApiKeys = 0;
  const confirmation = await revocations.publish(pool, membershipEnded(workspaceId, targetId), async (db) => {
    await lockMembershipChanges(db, workspaceId);
    await actingOwner(db, acting);
    const target = await lockTarget(db, workspaceId, targetId);
    if (role !== 'owner') await keepAnOwner(db, workspaceId, target.member);
    await updateMemberRole(db, workspaceId, targetId, role);
    if (role === 'guest') revokedApiKeys = await revokeMemberApiKeys(db, workspaceId, targetId);
    await recordAudit(db, { workspaceId, action: 'member.role_changed', resourceType: 'member', resourceId: targetId.toLowerCase(), changes: ['role'] });
    changed = { ...target, member: { ...target.member, role } };
  });
  return { member: changed!, revokedApiKeys, confirmation };
}

/** Unassigns every task of a member, each with its `task.updated` event, a batch per statement. */
async function unassignTasks(db: Queryable, workspaceId: string, userId: string): Promise<number> {
  let unassigned = 0;
  for (;;) {
    const tasks = await lockTasksAssignedTo(db, workspaceId, userId, unassignBatchSize);
    if (tasks.length === 0) return unassigned;
    const writes = tasks.map((read): TaskWrite => {
      const { task } = read;
      const state = { name: task.name, listId: task.listId, isCompleted: task.isCompleted, statusId: task.statusId, assigneeId: task.assigneeId, description: task.description };
      const plan = planTaskUpdate(state, { assigneeId: null }, () => {
        throw new Error('unassigning never changes the status');
      });
      const { eventId, event, requestId, traceparent } = buildTaskEvent(plan.event ?? 'task.updated', { ...task, assigneeId: null });
      const change = { name: task.name, sectionId: task.listId, position: task.order, isCompleted: task.isCompleted, statusId: task.statusId, assigneeId: null, description: null };
      const audit = auditRecord({ workspaceId, action: 'task.updated', resourceType: 'task', resourceId: task.id, changes: ['assigneeId'] });
      return { id: task.id, workspaceId, version: read.version, change, eventId, event, requestId, traceparent, audit };
    });
    const written = await writeTaskChanges(db, writes);
    // The rows are locked by this transaction: a write can only fail if something is badly wrong.
    if (written.some((json) => json === null)) throw new Error('a locked task changed while its assignee was being removed');
    unassigned += writes.length;
  }
}

export async function removeMember(
  pool: Pool,
  revocations: Revocations,
  acting: ActingPerson,
  userId: string,
): Promise<{ unassignedTasks: number; confirmation: Confirmation }> {
  const workspaceId = pathId(acting.workspaceId, 'workspace');
  const targetId = pathId(userId, 'member');
  let unassignedTasks = 0;
  const confirmation = await revocations.publish(pool, membershipEnded(workspaceId, targetId), async (db) => {
    await lockMembershipChanges(db, workspaceId);
    await actingOwner(db, acting);
    // Locked first: an assignment to them that commits now waits, then fails its foreign key.
    const target = await lockTarget(db, workspaceId, targetId);
    await keepAnOwner(db, workspaceId, target.member);
    unassignedTasks = await unassignTasks(db, workspaceId, targetId);
    if (!(await deleteMember(db, workspaceId, targetId))) throw notFound('member not found');
    await recordAudit(db, { workspaceId, action: 'member.removed', resourceType: 'member', resourceId: targetId.toLowerCase() });
  });
  return { unassignedTasks, confirmation };
}
