import type { Rest, RestAnswer } from './rest.js';

/** The largest page the REST list answers (`GET /v1/projects/:projectId/tasks?limit=`). */
export const maxTaskPage = 500;

export interface TaskPage {
  tasks: unknown[];
  /** Bytes of the page's JSON. */
  bytes: number;
  /** The cursor of the next page; absent on the last one. */
  nextCursor?: string;
}

/** One page of a project's task list, through the REST paging (`limit` + `cursor`; the next in `Link`). */
export async function taskPage(rest: Rest, projectId: string, query: { limit: number; cursor?: string; isCompleted?: boolean }): Promise<TaskPage> {
  const params = new URLSearchParams({ limit: String(query.limit) });
  if (query.cursor !== undefined) params.set('cursor', query.cursor);
  if (query.isCompleted !== undefined) params.set('isCompleted', String(query.isCompleted));
  const answer: RestAnswer = await rest({ method: 'GET', path: `/projects/${encodeURIComponent(projectId)}/tasks?${params.toString()}` });
  return {
    tasks: Array.isArray(answer.body) ? answer.body : [],
    bytes: answer.bytes,
    ...(answer.nextCursor === undefined ? {} : { nextCursor: answer.nextCursor }),
  };
}

/**
 * A project's tasks page by page, in display order: the MCP tools never hold a whole list (a project
 * has no task limit), only one page of at most `maxTaskPage` tasks (and about 1 MiB) at a time.
 */
export async function* taskPages(rest: Rest, projectId: string, filter: { isCompleted?: boolean } = {}): AsyncGenerator<TaskPage> {
  let cursor: string | undefined;
  do {
    const page = await taskPage(rest, projectId, { limit: maxTaskPage, ...filter, ...(cursor === undefined ? {} : { cursor }) });
    yield page;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
}
