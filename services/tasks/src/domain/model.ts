/** The tasks context's records as the domain sees them (the proto and SQL shapes map to these). */

export const plans = ['free', 'pro'] as const;
export type Plan = (typeof plans)[number];

export const roles = ['owner', 'member', 'guest'] as const;
export type Role = (typeof roles)[number];

export type SystemType = 'todo' | 'done';

/** A rich-text node array as stored (validated by the rich-text module before it is stored). */
export type RichTextNodes = unknown[];

export interface Workspace {
  id: string;
  name: string;
  urlId: string;
  avatarUrl: string | null;
  taskPrefix: string;
  plan: Plan;
}

export interface Member {
  userId: string;
  name: string;
  email: string;
  role: Role;
  avatarUrl: string | null;
}

/** One workspace of a person (found by email) and who they are in it. */
export interface Membership {
  workspace: Workspace;
  userId: string;
  role: Role;
}

export interface Status {
  id: string;
  name: string;
  color: string;
  systemType: SystemType | null;
  order: number;
}

export interface Project {
  id: string;
  name: string;
  description: string | null;
  taskPrefix: string;
  /** Row version, bumped by every change (migration 012): its entity tag. */
  version: string;
}

export interface Section {
  id: string;
  name: string;
  order: number;
  projectId: string;
  /** Row version, bumped by every change (migration 012): its entity tag. */
  version: string;
}

export interface Label {
  id: string;
  name: string;
  color: string;
}

export interface Task {
  id: string;
  workspaceId: string;
  number: number;
  name: string;
  isCompleted: boolean;
  description: RichTextNodes | null;
  listId: string;
  projectId: string;
  assigneeId: string | null;
  statusId: string | null;
  order: number;
  createdAt: Date;
  /** The last change of what the API shows of the task (set by the write, in Postgres). */
  updatedAt: Date;
  labels: Label[];
}

export interface IssuedApiKey {
  id: string;
  name: string;
  /** The secret; returned once, never stored. */
  key: string;
}

/** The limits of the free plan; the pro plan has none. */
export const freePlanLimits = { projects: 3, tasks: 300 } as const;

/** Statuses every new workspace starts with, in order (distinct `#RRGGBB` colours). */
export const defaultStatuses: ReadonlyArray<{ name: string; color: string; systemType: SystemType | null }> = [
  { name: 'To Do', color: '#8B95A1', systemType: 'todo' },
  { name: 'In Progress', color: '#2F80ED', systemType: null },
  { name: 'Done', color: '#27AE60', systemType: 'done' },
];

/** The section every new project starts with. */
export const defaultSectionName = 'To Do';
