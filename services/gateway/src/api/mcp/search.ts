import type { Rest } from './rest.js';
import { taskPages } from './task-pages.js';

/**
 * Finding tasks by text, for the `find_tasks` tool. The contract has no search endpoint, so this
 * reads what a REST client would: `GET /v1/projects`, then each project's `GET
 * /v1/projects/:id/tasks` page by page (`?limit=&cursor=`, so one list is never held whole), and matches the
 * text case-insensitively in each task's name and its description's plain text. Bounded: at most
 * `maxProjects` projects and `maxBytes` of task lists are read, and at most `limit` matches are
 * returned; `truncated` says when a bound cut the search short.
 */
export const searchBounds = {
  maxProjects: 50,
  maxBytes: 16 * 1024 * 1024,
  maxLimit: 50,
  defaultLimit: 20,
  maxTextLength: 200,
} as const;

export interface FoundTask {
  id: string;
  number: number;
  name: string;
  isCompleted: boolean;
  projectId: string;
  listId: string;
  /** Where the text was found. */
  matchedIn: 'name' | 'description';
}

export interface SearchResult {
  matches: FoundTask[];
  projectsSearched: number;
  /** True when a bound (projects, bytes, limit) stopped the search before every task was read. */
  truncated: boolean;
}

interface ListedTask {
  id: string;
  number: number;
  name: string;
  isCompleted: boolean;
  listId: string;
  description: unknown;
}

/** The plain text of a rich-text description: the `text` of its leaves, in order (contract §2). */
export function plainText(nodes: unknown): string {
  const parts: string[] = [];
  const pending: unknown[] = Array.isArray(nodes) ? [...(nodes as unknown[])].reverse() : [];
  // Iterative, depth-first, in document order: a hostile depth cannot overflow the stack.
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (typeof node !== 'object' || node === null) continue;
    if ('text' in node && typeof node.text === 'string') parts.push(node.text);
    if ('children' in node && Array.isArray(node.children)) {
      for (let i = node.children.length - 1; i >= 0; i--) pending.push(node.children[i] as unknown);
    }
  }
  return parts.join('');
}

/** Where `needle` (already lower-cased) occurs in a task, if it does. */
export function matchIn(task: Pick<ListedTask, 'name' | 'description'>, needle: string): FoundTask['matchedIn'] | undefined {
  if (task.name.toLowerCase().includes(needle)) return 'name';
  if (plainText(task.description).toLowerCase().includes(needle)) return 'description';
  return undefined;
}

const isListedTask = (value: unknown): value is ListedTask =>
  typeof value === 'object' && value !== null && 'id' in value && 'name' in value && typeof value.name === 'string';

export async function findTasks(
  rest: Rest,
  query: { text: string; projectId?: string; limit: number; includeCompleted: boolean },
): Promise<SearchResult> {
  const needle = query.text.toLowerCase();
  let projectIds: string[];
  if (query.projectId !== undefined) {
    projectIds = [query.projectId];
  } else {
    const projects = (await rest({ method: 'GET', path: '/projects' })).body;
    projectIds = Array.isArray(projects) ? projects.map((project) => String((project as { id: unknown }).id)) : [];
  }
  const result: SearchResult = { matches: [], projectsSearched: 0, truncated: projectIds.length > searchBounds.maxProjects };
  let bytes = 0;
  for (const projectId of projectIds.slice(0, searchBounds.maxProjects)) {
    if (bytes >= searchBounds.maxBytes) {
      result.truncated = true;
      break;
    }
    result.projectsSearched++;
    const filter = query.includeCompleted ? {} : { isCompleted: false };
    for await (const page of taskPages(rest, projectId, filter)) {
      bytes += page.bytes;
      for (const task of page.tasks) {
        if (!isListedTask(task) || (!query.includeCompleted && task.isCompleted)) continue;
        const matchedIn = matchIn(task, needle);
        if (matchedIn === undefined) continue;
        if (result.matches.length === query.limit) {
          result.truncated = true;
          return result;
        }
        const { id, number, name, isCompleted, listId } = task;
        result.matches.push({ id, number, name, isCompleted, projectId, listId, matchedIn });
      }
      if (bytes >= searchBounds.maxBytes && page.nextCursor !== undefined) {
        result.truncated = true;
        return result;
      }
    }
  }
  return result;
}
