import { z } from 'zod';
import type { Label__Output } from '@tws/proto-types/generated/tasks/v1/Label';
import type { Member__Output } from '@tws/proto-types/generated/tasks/v1/Member';
import type { Role__Output } from '@tws/proto-types/generated/tasks/v1/Role';
import type { Project__Output } from '@tws/proto-types/generated/tasks/v1/Project';
import type { Section__Output } from '@tws/proto-types/generated/tasks/v1/Section';
import type { Status__Output } from '@tws/proto-types/generated/tasks/v1/Status';
import type { Task__Output } from '@tws/proto-types/generated/tasks/v1/Task';
import type { Workspace__Output } from '@tws/proto-types/generated/tasks/v1/Workspace';
import { RichText, Timestamp, type RichTextNode } from './common.js';

/*
 * The resources of contract section 2, exactly: every documented field, nullable ones as `null`
 * (never omitted), nothing else. The response serializer encodes through these schemas, so a
 * field that is not listed here can never leak.
 */

export const Workspace = z
  .object({
    id: z.string(),
    name: z.string(),
    urlId: z.string().meta({ description: 'Used in task URLs: `{app_url}/{urlId}/task/{taskPrefix}-{number}`.' }),
    avatarUrl: z.string().nullable(),
    taskPrefix: z.string(),
  })
  .meta({ id: 'Workspace' });

export const Member = z
  .object({
    userId: z.string().meta({ description: 'Usable as `assigneeId` of tasks.' }),
    name: z.string(),
    email: z.string(),
    role: z.enum(['owner', 'member', 'guest']),
    avatarUrl: z.string().nullable(),
  })
  .meta({ id: 'Member' });

export const Status = z
  .object({
    id: z.string(),
    name: z.string(),
    color: z.string().meta({ description: 'Hex colour `#RRGGBB`.', examples: ['#3B82F6'] }),
    systemType: z
      .enum(['todo', 'done'])
      .nullable()
      .meta({ description: '`todo` = default start status, `done` = completion status, null = custom status.' }),
    order: z.int32(),
  })
  .meta({ id: 'Status' });

export const Project = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    taskPrefix: z.string(),
  })
  .meta({ id: 'Project' });

export const Section = z
  .object({
    id: z.string(),
    name: z.string(),
    order: z.int32().meta({ description: 'Position within the project, from 0.' }),
    projectId: z.string(),
  })
  .meta({ id: 'Section' });

/** A label element of a task's `labels` (and of the webhook payload's `data.labels`). */
export const Label = z
  .object({
    id: z.string(),
    name: z.string().meta({ description: '1–50 characters, unique in the workspace (case-insensitive).' }),
    color: z.string().meta({ description: 'Hex colour `#RRGGBB`.', examples: ['#1D4ED8'] }),
  })
  .meta({
    id: 'Label',
    description:
      'A label of the workspace, managed in the app (`{app_url}/{urlId}/settings/labels`). Putting it on a task or taking it off, and renaming, recolouring or deleting a label a task carries, changes the task: it emits `task.updated`.',
  });

const taskFields = {
  id: z.string(),
  number: z.int32().meta({ description: 'Per-project task number, used in the task URL.' }),
  name: z.string(),
  isCompleted: z.boolean(),
  description: RichText,
  listId: z.string().meta({ description: 'Id of the section holding the task.' }),
  assigneeId: z.string().nullable().meta({ description: 'A member `userId`, or null.' }),
  statusId: z.string().nullable(),
};

const UpdatedAt = Timestamp.meta({
  description: 'The last change of the task (any field, its labels). Filter with `updatedSince` to sync incrementally.',
});

/** A task in `GET /v1/projects/:projectId/tasks`: with `order`, without `projectId`/`labels`. */
export const TaskListItem = z
  .object({
    ...taskFields,
    order: z.int32().meta({ description: 'Display position within its section; lower = higher in the list.' }),
    createdAt: Timestamp,
    updatedAt: UpdatedAt,
  })
  .meta({ id: 'TaskListItem' });

/** A single task (`GET`/`PATCH /v1/tasks/:id`): with `projectId` and `labels`, without `order`. */
export const Task = z
  .object({
    ...taskFields,
    createdAt: Timestamp,
    projectId: z.string(),
    labels: z.array(Label).meta({ description: 'Read-only through the API; by name. Each element is `{id, name, color}`; a task carries at most 20.' }),
    updatedAt: UpdatedAt,
  })
  .meta({ id: 'Task' });

// ---- proto → API -------------------------------------------------------------------------------

const roles: Readonly<Record<Role__Output, 'owner' | 'member' | 'guest' | undefined>> = {
  ROLE_UNSPECIFIED: undefined,
  ROLE_OWNER: 'owner',
  ROLE_MEMBER: 'member',
  ROLE_GUEST: 'guest',
};

export function toWorkspace(workspace: Workspace__Output | null): z.output<typeof Workspace> {
  const found = required(workspace, 'workspace');
  return {
    id: found.id,
    name: found.name,
    urlId: found.urlId,
    avatarUrl: found.avatarUrl || null,
    taskPrefix: found.taskPrefix,
  };
}

export function toMember(member: Member__Output): z.output<typeof Member> {
  const role = roles[member.role];
  if (role === undefined) throw new Error(`unexpected member role ${String(member.role)}`);
  return { userId: member.userId, name: member.name, email: member.email, role, avatarUrl: member.avatarUrl || null };
}

export function toStatus(status: Status__Output): z.output<typeof Status> {
  const systemType = status.systemType === 'todo' || status.systemType === 'done' ? status.systemType : null;
  return { id: status.id, name: status.name, color: status.color, systemType, order: status.order };
}

export function toProject(project: Project__Output): z.output<typeof Project> {
  return { id: project.id, name: project.name, description: project.description || null, taskPrefix: project.taskPrefix };
}

export function toSection(section: Section__Output | null): z.output<typeof Section> {
  const found = required(section, 'section');
  return { id: found.id, name: found.name, order: found.order, projectId: found.projectId };
}

/** `descriptionJson` is the node array as JSON text; absent or empty means no description (null). */
function parseDescription(json: string | undefined): RichTextNode[] | null {
  if (json === undefined || json === '') return null;
  const nodes: unknown = JSON.parse(json);
  if (!Array.isArray(nodes)) throw new Error('task description is not a node array');
  return nodes.length === 0 ? null : (nodes as RichTextNode[]);
}

export function toTask(task: Task__Output | null): z.output<typeof Task> {
  const found = required(task, 'task');
  return {
    id: found.id,
    number: found.number,
    name: found.name,
    isCompleted: found.isCompleted,
    description: parseDescription(found.descriptionJson),
    listId: found.listId,
    assigneeId: found.assigneeId || null,
    statusId: found.statusId || null,
    createdAt: found.createdAt,
    projectId: found.projectId,
    labels: found.labels.map((label: Label__Output) => ({ id: label.id, name: label.name, color: label.color })),
    updatedAt: found.updatedAt,
  };
}

function required<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`tasks service answered without a ${what}`);
  return value;
}
