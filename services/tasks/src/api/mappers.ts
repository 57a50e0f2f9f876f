import type { Member as MemberMessage } from '@tws/proto-types/generated/tasks/v1/Member';
import type { Membership as MembershipMessage } from '@tws/proto-types/generated/tasks/v1/Membership';
import type { Plan as PlanMessage, Plan__Output } from '@tws/proto-types/generated/tasks/v1/Plan';
import type { Project as ProjectMessage } from '@tws/proto-types/generated/tasks/v1/Project';
import type { Role as RoleMessage, Role__Output } from '@tws/proto-types/generated/tasks/v1/Role';
import type { Section as SectionMessage } from '@tws/proto-types/generated/tasks/v1/Section';
import type { Status as StatusMessage } from '@tws/proto-types/generated/tasks/v1/Status';
import type { Task as TaskMessage } from '@tws/proto-types/generated/tasks/v1/Task';
import type { TaskComment as TaskCommentMessage } from '@tws/proto-types/generated/tasks/v1/TaskComment';
import type { Workspace as WorkspaceMessage } from '@tws/proto-types/generated/tasks/v1/Workspace';
import { invalid } from '@tws/common';
import type { CommentRow } from '../domain/comments.js';
import { projectTagOf, sectionTagOf } from '../domain/projects.js';
import type { Member, Membership, Plan, Project, Role, Section, Status, Task, Workspace } from '../domain/model.js';

/** Proto ⇄ domain mapping: absent optional fields for nulls, enums as their names. */

const optional = <T>(value: T | null): T | undefined => (value === null ? undefined : value);

const roleNames: Record<Role, Role__Output> = { owner: 'ROLE_OWNER', member: 'ROLE_MEMBER', guest: 'ROLE_GUEST' };
const planNames: Record<Plan, Plan__Output> = { free: 'PLAN_FREE', pro: 'PLAN_PRO' };

export function roleFromProto(role: Role__Output | RoleMessage): Role {
  switch (role) {
    case 'ROLE_OWNER':
      return 'owner';
    case 'ROLE_MEMBER':
      return 'member';
    case 'ROLE_GUEST':
      return 'guest';
    default:
      throw invalid('role must be one of owner, member, guest');
  }
}

export function planMessage(plan: Plan): Plan__Output {
  return planNames[plan];
}

/** An unspecified plan means free. */
export function planFromProto(plan: Plan__Output | PlanMessage): Plan {
  return plan === 'PLAN_PRO' ? 'pro' : 'free';
}

export const workspaceMessage = (workspace: Workspace): WorkspaceMessage => ({
  id: workspace.id,
  name: workspace.name,
  urlId: workspace.urlId,
  avatarUrl: optional(workspace.avatarUrl),
  taskPrefix: workspace.taskPrefix,
  plan: planNames[workspace.plan],
});

export const memberMessage = (member: Member): MemberMessage => ({
  userId: member.userId,
  name: member.name,
  email: member.email,
  role: roleNames[member.role],
  avatarUrl: optional(member.avatarUrl),
});

export const membershipMessage = (membership: Membership): MembershipMessage => ({
  workspace: workspaceMessage(membership.workspace),
  userId: membership.userId,
  role: roleNames[membership.role],
});

export const statusMessage = (status: Status): StatusMessage => ({
  id: status.id,
  name: status.name,
  color: status.color,
  systemType: optional(status.systemType),
  order: status.order,
});

export const projectMessage = (project: Project): ProjectMessage => ({
  id: project.id,
  name: project.name,
  description: optional(project.description),
  taskPrefix: project.taskPrefix,
  entityTag: projectTagOf(project),
});

export const sectionMessage = (section: Section): SectionMessage => ({
  id: section.id,
  name: section.name,
  order: section.order,
  projectId: section.projectId,
  entityTag: sectionTagOf(section),
});

export const taskMessage = (task: Task): TaskMessage => ({
  id: task.id,
  number: task.number,
  name: task.name,
  isCompleted: task.isCompleted,
  descriptionJson: task.description === null ? undefined : JSON.stringify(task.description),
  listId: task.listId,
  assigneeId: optional(task.assigneeId),
  statusId: optional(task.statusId),
  order: task.order,
  createdAt: task.createdAt.toISOString(),
  projectId: task.projectId,
  updatedAt: task.updatedAt.toISOString(),
  labels: task.labels.map((label) => ({ id: label.id, name: label.name, color: label.color })),
});

/** A comment as TaskPageService.ListComments and TasksService.ListTaskComments answer it. */
export function commentMessage(comment: CommentRow): TaskCommentMessage {
  return {
    id: comment.id,
    authorName: comment.authorName,
    ...(comment.authorUserId ? { authorUserId: comment.authorUserId } : {}),
    createdAt: comment.createdAt.toISOString(),
    bodyJson: JSON.stringify(comment.body),
  };
}
