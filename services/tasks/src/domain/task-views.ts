import { invalid, notFound, type Queryable } from '@tws/common';
import { renderTaskList, renderTasks, type RenderedTaskList, type TaskRef } from '../store/task-json.js';
import { isUuid } from './identifiers.js';
import { pathId } from './validation.js';

/**
 * `GET /v1/tasks/:id` for a batch of requests: each task as the API's single-task JSON, or null
 * where its workspace has no such task (a malformed id is simply not found). When the answer would
 * pass its byte bound, only the first tasks are answered and `truncated` is set (ask for the rest).
 */
export async function getTasksJson(db: Queryable, refs: readonly TaskRef[]): Promise<{ tasks: Array<string | null>; truncated: boolean }> {
  const wellFormed = refs.map((ref) => isUuid(ref.workspaceId) && isUuid(ref.id));
  const found = await renderTasks(db, refs.filter((_ref, index) => wellFormed[index]));
  const tasks: Array<string | null> = [];
  let next = 0;
  for (const ok of wellFormed) {
    const json = ok ? found[next++] : null;
    if (json === undefined) return { tasks, truncated: true };
    tasks.push(json);
  }
  return { tasks, truncated: false };
}

/**
 * `GET /v1/projects/:projectId/tasks`: the project's tasks as the API's list JSON with the list's
 * version, or only the version when it is still `knownVersion` (a decimal int64; "0": none). A list
 * over one message is only `streamed`: StreamTasks reads it (api/task-list-stream-service.ts).
 */
export async function listTasksJson(db: Queryable, workspaceId: string, projectId: string, knownVersion: string): Promise<RenderedTaskList> {
  if (!/^\d{1,19}$/.test(knownVersion)) throw invalid('knownVersion must be a non-negative integer');
  const list = await renderTaskList(db, pathId(workspaceId, 'workspace'), pathId(projectId, 'project'), knownVersion);
  if (list === null) throw notFound('project not found');
  return list;
}
