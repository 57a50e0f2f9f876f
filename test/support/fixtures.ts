import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { adminCli, type TestWorkspace } from './admin.js';
import { api, type ApiResponse, type Credentials } from './api.js';

/** Resource shapes of the API contract (section 2). */
export interface Workspace {
  id: string;
  name: string;
  urlId: string;
  avatarUrl: string | null;
  taskPrefix: string;
}
export interface Member {
  userId: string;
  name: string;
  email: string;
  role: 'owner' | 'member' | 'guest';
  avatarUrl: string | null;
}
export interface Status {
  id: string;
  name: string;
  color: string;
  systemType: 'todo' | 'done' | null;
  order: number;
}
export interface Project {
  id: string;
  name: string;
  description: string | null;
  taskPrefix: string;
}
export interface Section {
  id: string;
  name: string;
  order: number;
  projectId: string;
}
export interface RichTextNode {
  type?: string;
  children?: RichTextNode[];
  text?: string;
  [attribute: string]: unknown;
}
/** A task in `GET /v1/projects/:projectId/tasks`. */
export interface ListedTask {
  id: string;
  number: number;
  name: string;
  isCompleted: boolean;
  description: RichTextNode[] | null;
  listId: string;
  assigneeId: string | null;
  statusId: string | null;
  order: number;
  createdAt: string;
  /** The last change of the task (issue 21: incremental sync). */
  updatedAt: string;
}
/** A task in `GET /v1/tasks/:id` (and, by the design's decision, the PATCH response). */
export interface Task extends Omit<ListedTask, 'order'> {
  projectId: string;
  labels: unknown[];
}
export interface CreatedProject {
  id: string;
  defaultListId: string;
}
export interface CreatedTask {
  id: string;
  number: number;
}
export interface ApiKey {
  id: string;
  name: string;
  key: string;
}

/** ISO 8601 UTC with milliseconds, as the contract's `<timestamp>`. */
export const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** An id that exists nowhere (ids are opaque UUID strings). */
export const unknownId = (): string => randomUUID();

let names = 0;
/** A readable name unique within the run. */
export function uniqueName(prefix: string): string {
  names += 1;
  return `${prefix} ${process.pid}-${names}`;
}

export const keyOf = (workspace: TestWorkspace): Credentials => ({ apiKey: workspace.apiKey.key });

/**
 * The contract's error answer: the given status, `application/json`, and a body that is exactly
 * `{"error": "<non-empty message>"}`. Status and body are compared together so a failure shows both.
 */
export function expectError(response: ApiResponse, status: number): void {
  expect({ status: response.status, body: response.body }, response.text).toStrictEqual({
    status,
    body: { error: expect.stringMatching(/\S/) },
  });
  expect(response.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
}

/** Asserts a success status, showing the body when it is not. */
export function expectStatus(response: ApiResponse, status: number): void {
  expect(response.status, `${response.status} ${response.text}`).toBe(status);
}

/** One API call that must answer `expected`; set-up helpers fail loudly with the whole exchange. */
async function call<T>(method: string, path: string, credentials: Credentials, body: unknown, expected: number): Promise<T> {
  const response = await api<T>(method, path, { credentials, ...(body === undefined ? {} : { body }) });
  if (response.status !== expected) {
    throw new Error(`${method} ${path} ${body === undefined ? '' : JSON.stringify(body)} answered ${response.status} ${response.text}`);
  }
  return response.body;
}

export const listMembers = (credentials: Credentials) => call<Member[]>('GET', '/v1/members', credentials, undefined, 200);
export const listProjects = (credentials: Credentials) => call<Project[]>('GET', '/v1/projects', credentials, undefined, 200);
export const listSections = (credentials: Credentials, projectId: string) =>
  call<Section[]>('GET', `/v1/projects/${projectId}/sections`, credentials, undefined, 200);
export const listTasks = (credentials: Credentials, projectId: string) =>
  call<ListedTask[]>('GET', `/v1/projects/${projectId}/tasks`, credentials, undefined, 200);
export const getTask = (credentials: Credentials, id: string) => call<Task>('GET', `/v1/tasks/${id}`, credentials, undefined, 200);

export const createProject = (credentials: Credentials, body: { name?: string; description?: string } = {}) =>
  call<CreatedProject>('POST', '/v1/projects', credentials, { name: uniqueName('Project'), ...body }, 201);
export const createSection = (credentials: Credentials, projectId: string, name = uniqueName('Section')) =>
  call<{ id: string }>('POST', '/v1/sections', credentials, { projectId, name }, 201);
export const createTask = (
  credentials: Credentials,
  body: { projectId: string; listId: string; name?: string; assigneeId?: string },
) => call<CreatedTask>('POST', '/v1/tasks', credentials, { name: uniqueName('Task'), ...body }, 201);
export const patchTask = (credentials: Credentials, id: string, body: Record<string, unknown>) =>
  call<Task>('PATCH', `/v1/tasks/${id}`, credentials, body, 200);
export const createComment = (credentials: Credentials, taskId: string, text = 'A comment') =>
  call<{ id: string }>('POST', `/v1/tasks/${taskId}/comments`, credentials, { text }, 201);

/** A project with `count` tasks in its default section, created one after another (numbers 1..count). */
export async function createProjectWithTasks(
  credentials: Credentials,
  count: number,
  options: { name?: string; description?: string } = {},
): Promise<{ project: CreatedProject; tasks: CreatedTask[] }> {
  const project = await createProject(credentials, options);
  const tasks: CreatedTask[] = [];
  for (let index = 0; index < count; index++) {
    tasks.push(await createTask(credentials, { projectId: project.id, listId: project.defaultListId, name: `Task ${index + 1}` }));
  }
  return { project, tasks };
}

/** The workspace's statuses, with its `todo`, `done` and first custom status picked out. */
export async function getStatuses(credentials: Credentials): Promise<{ all: Status[]; todo: Status; done: Status; custom: Status }> {
  const all = await call<Status[]>('GET', '/v1/statuses', credentials, undefined, 200);
  const pick = (systemType: Status['systemType']): Status => {
    const found = all.find((status) => status.systemType === systemType);
    if (!found) throw new Error(`no status with systemType ${String(systemType)} in ${JSON.stringify(all)}`);
    return found;
  };
  return { all, todo: pick('todo'), done: pick('done'), custom: pick(null) };
}

/** Adds a member to a workspace through the admin CLI. */
export async function addMember(workspaceId: string, role: Member['role'], name = uniqueName(`A ${role}`)): Promise<Member> {
  const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '.')}@example.test`;
  const result = await adminCli(['member', 'add', '--workspace', workspaceId, '--email', email, '--name', name, '--role', role]);
  if (result.code !== 0) throw new Error(`member add failed: ${JSON.stringify(result.json)} ${result.stderr}`);
  return (result.json as { member: Member }).member;
}

/** A further API key of a workspace, made through the admin CLI. */
export async function createApiKey(workspaceId: string, userId: string, name = uniqueName('Key')): Promise<ApiKey> {
  const result = await adminCli(['apikey', 'create', '--workspace', workspaceId, '--user', userId, '--name', name]);
  if (result.code !== 0) throw new Error(`apikey create failed: ${JSON.stringify(result.json)} ${result.stderr}`);
  return (result.json as { apiKey: ApiKey }).apiKey;
}

/** Several API keys of one workspace, to spread load that would otherwise meet one key's rate limit. */
export async function createApiKeys(workspace: TestWorkspace, count: number): Promise<Credentials[]> {
  const keys: Credentials[] = [];
  for (let index = 0; index < count; index++) keys.push({ apiKey: (await createApiKey(workspace.workspace.id, workspace.owner.userId)).key });
  return keys;
}

/** Repeats `probe` until `done` holds (returning that value) or the time is up (returning the last value). */
export async function pollUntil<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  options: { timeoutMs: number; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() >= deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200));
  }
}

/** Counts the statuses of many responses, e.g. `{201: 300, 403: 100}`. */
export function countStatuses(responses: ApiResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
  return counts;
}

/** Whether a rich-text node is a leaf: it has no child nodes (the contract: leaves carry the `text`). */
const isLeaf = (node: RichTextNode): boolean => !Array.isArray(node.children) || node.children.length === 0;

/** Plain text of a rich-text description: the `text` of every leaf, concatenated in document order. */
export function plainText(nodes: RichTextNode[]): string {
  return nodes.map((node) => (isLeaf(node) ? (node.text ?? '') : plainText(node.children!))).join('');
}

/**
 * Problems with a rich-text node array against the contract ("each node has `type` and `children`;
 * leaf nodes carry a `text` string"): every block (top-level) node has a string `type` and a
 * `children` array; every node with children has a string `type`; every leaf has a string `text`.
 * Returns the list of problems (empty = well formed).
 */
export function richTextProblems(nodes: unknown, path = 'description', topLevel = true): string[] {
  if (!Array.isArray(nodes)) return [`${path} is not an array`];
  const problems: string[] = [];
  nodes.forEach((node: unknown, index) => {
    const at = `${path}[${index}]`;
    if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      problems.push(`${at} is not an object`);
      return;
    }
    const record = node as RichTextNode;
    if ('children' in record && !Array.isArray(record.children)) problems.push(`${at} has a children that is not an array`);
    if (topLevel && !Array.isArray(record.children)) problems.push(`${at} (a block) has no children array`);
    if ((topLevel || !isLeaf(record)) && typeof record.type !== 'string') problems.push(`${at} has no string type`);
    if (isLeaf(record)) {
      if (typeof record.text !== 'string') problems.push(`${at} is a leaf without a string text`);
    } else {
      problems.push(...richTextProblems(record.children, `${at}.children`, false));
    }
  });
  return problems;
}
