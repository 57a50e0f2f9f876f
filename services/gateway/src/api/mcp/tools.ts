import { z } from 'zod';
import { CommentText } from '../comments/index.js';
import { BodyId, Name } from '../schemas/common.js';
import { DescriptionInput } from '../tasks/index.js';
import type { HttpMethod, Rest } from './rest.js';
import { findTasks, searchBounds } from './search.js';
import { maxTaskPage, taskPage } from './task-pages.js';

/**
 * The MCP tools: each one is a REST route of the contract (or, for `find_tasks`, a bounded series of
 * REST reads), called through `rest` as the caller. Arguments that are path ids are taken here;
 * every other argument is sent as the REST body exactly as given, so the route's own validation
 * answers (field-named 400s, unknown fields refused). The input schemas document the arguments with
 * the REST routes' own field schemas; they are not a second set of rules.
 */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  /** The HTTP method of the REST route it runs: decides the scope it needs (GET = read). */
  method: HttpMethod;
  /** The arguments (without `workspaceId`), as zod: the tool's JSON Schema is generated from it. */
  input: z.ZodObject;
  /** False: every argument is named in `input`, others are refused. True: the rest is the REST body. */
  passesBody: boolean;
  run(args: Record<string, unknown>, rest: Rest): Promise<unknown>;
}

/** An argument the tool layer itself refuses (a path id missing or not a string, an unknown argument). */
export class ToolInputError extends Error {}

const id = (what: string) => BodyId.meta({ description: `${what} (UUID).` });

/** A path id argument: required, a string; encoded for the URL (the route answers 404 for a non-UUID). */
function pathId(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value.length === 0) throw new ToolInputError(`${name}: required, a string id`);
  return encodeURIComponent(value);
}

/** The arguments other than the path ids and `workspaceId`: the REST body. */
function bodyOf(args: Record<string, unknown>, ...pathArgs: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) if (!pathArgs.includes(key) && key !== 'workspaceId') body[key] = value;
  return body;
}

const bodyOfCall = async (rest: Rest, call: Parameters<Rest>[0]): Promise<unknown> => (await rest(call)).body;

const listTasksBounds = { defaultLimit: 100, maxLimit: maxTaskPage } as const;

const ListTasksInput = z.object({
  projectId: id('The project'),
  cursor: z.string().min(1).max(200).optional().meta({ description: 'The `nextCursor` of the previous page (absent: the first page).' }),
  limit: z
    .number()
    .int()
    .min(1)
    .max(listTasksBounds.maxLimit)
    .optional()
    .meta({ description: `At most this many tasks (default ${listTasksBounds.defaultLimit}, max ${listTasksBounds.maxLimit}).` }),
  isCompleted: z.boolean().optional().meta({ description: 'Only completed (true) or open (false) tasks.' }),
});

const FindTasksInput = z.object({
  text: z
    .string()
    .min(1)
    .max(searchBounds.maxTextLength)
    .meta({ description: 'Text to look for, case-insensitive, in task names and descriptions.' }),
  projectId: id('Only this project').optional(),
  includeCompleted: z.boolean().optional().meta({ description: 'Also completed tasks (default true).' }),
  limit: z
    .number()
    .int()
    .min(1)
    .max(searchBounds.maxLimit)
    .optional()
    .meta({ description: `At most this many matches (default ${searchBounds.defaultLimit}, max ${searchBounds.maxLimit}).` }),
});

const UpdateTaskFields = {
  name: Name.optional().meta({ description: 'New name.' }),
  listId: id('Move to this section of the same project').optional(),
  isCompleted: z.boolean().optional().meta({ description: 'Completion; also sets statusId to the matching system status.' }),
  statusId: id('A status id; also sets isCompleted from the status').optional(),
  assigneeId: id('A member userId, or null to unassign').nullable().optional(),
  description: DescriptionInput.optional(),
};

/** Parses arguments the tool layer reads itself (pagination, search): zod messages name the argument. */
function parseOwn<S extends z.ZodObject>(schema: S, args: Record<string, unknown>): z.output<S> {
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  throw new ToolInputError(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`).join('; '));
}

export const tools: readonly ToolDefinition[] = [
  {
    name: 'get_workspace',
    title: 'Get the workspace',
    description: 'The workspace: id, name, urlId (used in task URLs), avatarUrl, taskPrefix.',
    method: 'GET',
    input: z.object({}),
    passesBody: false,
    run: (_args, rest) => bodyOfCall(rest, { method: 'GET', path: '/workspace' }),
  },
  {
    name: 'list_members',
    title: 'List members',
    description: 'Members of the workspace: userId (usable as a task assigneeId), name, email, role (owner, member, guest), avatarUrl.',
    method: 'GET',
    input: z.object({}),
    passesBody: false,
    run: (_args, rest) => bodyOfCall(rest, { method: 'GET', path: '/members' }),
  },
  {
    name: 'list_statuses',
    title: 'List task statuses',
    description:
      'Task statuses in order: id, name, color, systemType (`todo` = start status, `done` = completion status, null = custom), order.',
    method: 'GET',
    input: z.object({}),
    passesBody: false,
    run: (_args, rest) => bodyOfCall(rest, { method: 'GET', path: '/statuses' }),
  },
  {
    name: 'list_projects',
    title: 'List projects',
    description: 'Projects of the workspace: id, name, description, taskPrefix (used in task URLs).',
    method: 'GET',
    input: z.object({}),
    passesBody: false,
    run: (_args, rest) => bodyOfCall(rest, { method: 'GET', path: '/projects' }),
  },
  {
    name: 'list_sections',
    title: 'List sections of a project',
    description: 'Sections (lists) of a project in order: id, name, order, projectId. A task lives in one section (its listId).',
    method: 'GET',
    input: z.object({ projectId: id('The project') }),
    passesBody: false,
    run: (args, rest) => bodyOfCall(rest, { method: 'GET', path: `/projects/${pathId(args, 'projectId')}/sections` }),
  },
  {
    name: 'list_tasks',
    title: 'List tasks of a project',
    description:
      'Tasks of a project, in a page: `tasks` (id, number, name, isCompleted, description as rich text, listId, assigneeId, ' +
      'statusId, order, createdAt, updatedAt), and `nextCursor` when more remain (pass it as `cursor` for the next page). ' +
      'Use find_tasks to look for text.',
    method: 'GET',
    input: ListTasksInput,
    passesBody: false,
    async run(args, rest) {
      const { projectId, cursor, limit = listTasksBounds.defaultLimit, isCompleted } = parseOwn(ListTasksInput, args);
      const page = await taskPage(rest, projectId, { limit, ...(cursor === undefined ? {} : { cursor }), ...(isCompleted === undefined ? {} : { isCompleted }) });
      return { tasks: page.tasks, ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) };
    },
  },
  {
    name: 'get_task',
    title: 'Get a task',
    description:
      'One task: id, number, name, isCompleted, description (rich-text nodes; its plain text is the `text` of the leaves), ' +
      'listId, projectId, assigneeId, statusId, labels, createdAt.',
    method: 'GET',
    input: z.object({ taskId: id('The task') }),
    passesBody: false,
    run: (args, rest) => bodyOfCall(rest, { method: 'GET', path: `/tasks/${pathId(args, 'taskId')}` }),
  },
  {
    name: 'find_tasks',
    title: 'Find tasks by text',
    description:
      'Tasks whose name or description contains the text (case-insensitive), across the projects (or one project). ' +
      `Bounded: at most ${searchBounds.maxProjects} projects and ${searchBounds.maxBytes / 1024 / 1024} MiB of task lists ` +
      'are read; `truncated` is true when a bound or the limit cut the search short. Returns id, number, name, isCompleted, ' +
      'projectId, listId and where the text matched.',
    method: 'GET',
    input: FindTasksInput,
    passesBody: false,
    async run(args, rest) {
      const { text, projectId, includeCompleted = true, limit = searchBounds.defaultLimit } = parseOwn(FindTasksInput, args);
      return findTasks(rest, { text, limit, includeCompleted, ...(projectId === undefined ? {} : { projectId }) });
    },
  },
  {
    name: 'create_task',
    title: 'Create a task',
    description:
      'Creates a task in a section of a project; returns its id and number. The optional markdown `description` ' +
      '(headings, lists, bold, italic, strikethrough, code, blockquote) is set right after creation (an update of the new task).',
    method: 'POST',
    input: z.object({
      projectId: id('The project'),
      listId: id('A section of the project (see list_sections)'),
      name: Name.meta({ description: 'The task name.' }),
      assigneeId: id('A member userId').optional(),
      description: DescriptionInput.optional(),
    }),
    passesBody: true,
    async run(args, rest) {
      const { description, ...fields } = bodyOf(args);
      const created = (await rest({ method: 'POST', path: '/tasks', body: fields })).body as { id: string; number: number };
      if (description === undefined) return created;
      await rest({ method: 'PATCH', path: `/tasks/${encodeURIComponent(created.id)}`, body: { description } });
      return created;
    },
  },
  {
    name: 'update_task',
    title: 'Update a task',
    description:
      'Changes the fields given (at least one): name, listId (a section of the same project), isCompleted, statusId, ' +
      'assigneeId (null unassigns), description (markdown recommended; null clears). Returns the task.',
    method: 'PATCH',
    input: z.object({ taskId: id('The task'), ...UpdateTaskFields }),
    passesBody: true,
    run: (args, rest) => bodyOfCall(rest, { method: 'PATCH', path: `/tasks/${pathId(args, 'taskId')}`, body: bodyOf(args, 'taskId') }),
  },
  {
    name: 'delete_task',
    title: 'Delete a task',
    description: 'Deletes a task and all its comments. Cannot be undone.',
    method: 'DELETE',
    input: z.object({ taskId: id('The task') }),
    passesBody: false,
    async run(args, rest) {
      const taskId = pathId(args, 'taskId');
      await rest({ method: 'DELETE', path: `/tasks/${taskId}` });
      return { deleted: true, id: decodeURIComponent(taskId) };
    },
  },
  {
    name: 'add_comment',
    title: 'Comment on a task',
    description:
      'Adds a comment to a task (markdown; blank lines separate blocks). It is attributed to the API key, or to you with a ' +
      'Bearer token. Returns its id.',
    method: 'POST',
    input: z.object({ taskId: id('The task'), text: CommentText }),
    passesBody: true,
    run: (args, rest) =>
      bodyOfCall(rest, { method: 'POST', path: `/tasks/${pathId(args, 'taskId')}/comments`, body: bodyOf(args, 'taskId') }),
  },
];

/** Refuses arguments a body-less tool does not name (a typo would otherwise be silently ignored). */
export function checkKnownArguments(tool: ToolDefinition, args: Record<string, unknown>): void {
  if (tool.passesBody) return;
  const known = new Set([...Object.keys(tool.input.shape), 'workspaceId']);
  const unknown = Object.keys(args).filter((key) => !known.has(key));
  if (unknown.length > 0) throw new ToolInputError(`unknown argument${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
}
