import { RestError, type Rest } from './rest.js';
import { taskPages } from './task-pages.js';

/**
 * Task resources: a task is addressed by its public URL `{app_url}/{urlId}/task/{taskPrefix}-{number}`
 * (contract §1), the address a person shares. Read through the REST API as the caller: the
 * workspace (its urlId must be the URL's), its projects (the prefix, case-insensitive), the
 * project's task list page by page until the number is found, then `GET /v1/tasks/:id`. Anything that does not resolve is
 * "task not found", whatever the reason, as on the task page.
 */
export interface TaskRef {
  urlId: string;
  taskPrefix: string;
  number: number;
}

const taskPath = /^([^/?#]{1,100})\/task\/([A-Za-z][A-Za-z0-9]{0,19})-([1-9][0-9]{0,8})$/;

/** The URI template of task resources (RFC 6570), under the app's public URL. */
export const taskUriTemplate = (appUrl: string): string => `${appUrl}/{urlId}/task/{taskRef}`;

/** The task a URL names, or undefined when it is not a task URL of this app. */
export function parseTaskUrl(uri: string, appUrl: string): TaskRef | undefined {
  if (uri.length > 2048 || !uri.startsWith(`${appUrl}/`)) return undefined;
  const match = taskPath.exec(uri.slice(appUrl.length + 1));
  if (!match) return undefined;
  let urlId: string;
  try {
    urlId = decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
  return { urlId, taskPrefix: match[2]!, number: Number(match[3]) };
}

const notFound = (): RestError => new RestError(404, 'task not found');

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

export async function readTask(rest: Rest, ref: TaskRef): Promise<unknown> {
  const workspace = (await rest({ method: 'GET', path: '/workspace' })).body;
  if (field(workspace, 'urlId') !== ref.urlId) throw notFound();
  const projects = (await rest({ method: 'GET', path: '/projects' })).body;
  const prefix = ref.taskPrefix.toUpperCase();
  const project = Array.isArray(projects)
    ? projects.find((candidate) => String(field(candidate, 'taskPrefix')).toUpperCase() === prefix)
    : undefined;
  if (project === undefined) throw notFound();
  let task: unknown;
  for await (const page of taskPages(rest, String(field(project, 'id')))) {
    task = page.tasks.find((candidate) => field(candidate, 'number') === ref.number);
    if (task !== undefined) break;
  }
  if (task === undefined) throw notFound();
  return (await rest({ method: 'GET', path: `/tasks/${encodeURIComponent(String(field(task, 'id')))}` })).body;
}
