import { invalid, notFound, type Queryable } from '@tws/common';
import type { ListTaskPageRequest__Output } from '@tws/proto-types/generated/tasks/v1/ListTaskPageRequest';
import { renderTaskListKeysetPage, type TaskListFilters, type TaskListKey } from '../store/task-list-page.js';
import { isUuid } from './identifiers.js';
import { pathId, referenceId } from './validation.js';

/** Most tasks in one page (the gateway's `limit` bound too). */
export const maxTaskPageLimit = 500;

const int32Max = 2 ** 31 - 1;
/** RFC 3339 date-time with a zone (Z or ±hh:mm), fractions of a second allowed. */
const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function listKey(key: ListTaskPageRequest__Output['after']): TaskListKey | null {
  if (key === null || key === undefined) return null;
  const { position, number } = key;
  const inRange = (value: number): boolean => Number.isInteger(value) && value >= -int32Max - 1 && value <= int32Max;
  if (!isUuid(key.sectionId) || !inRange(position) || !inRange(number)) throw invalid('cursor is malformed');
  return { sectionId: key.sectionId.toLowerCase(), position, number };
}

/** The request's filters, each checked (a malformed id or time is a 400, not "no match"). */
export function taskListFilters(request: ListTaskPageRequest__Output): TaskListFilters {
  const filters: TaskListFilters = {};
  if (request.isCompleted !== undefined) filters.isCompleted = request.isCompleted;
  if (request.statusId !== undefined) filters.statusId = referenceId(request.statusId, 'statusId', 'must be a UUID');
  if (request.listId !== undefined) filters.listId = referenceId(request.listId, 'listId', 'must be a UUID');
  if (request.unassigned && request.assigneeId !== undefined) throw invalid('assigneeId and unassigned exclude each other');
  if (request.unassigned) filters.assigneeId = null;
  else if (request.assigneeId !== undefined) filters.assigneeId = referenceId(request.assigneeId, 'assigneeId', 'must be a UUID');
  if (request.updatedSince !== undefined) {
    const since = new Date(request.updatedSince);
    if (!rfc3339.test(request.updatedSince) || Number.isNaN(since.getTime())) throw invalid('updatedSince must be an RFC 3339 date-time');
    filters.updatedSince = since;
  }
  return filters;
}

/**
 * `GET /v1/projects/:projectId/tasks?limit=…`: one page of the list (display order), filtered, with
 * the key the next page starts after (null on the last page). NOT_FOUND for an unknown project;
 * INVALID_ARGUMENT for a key whose section is not one of the project's (a cursor of another list).
 */
export async function listTaskPage(db: Queryable, request: ListTaskPageRequest__Output): Promise<{ json: string; next: TaskListKey | null }> {
  const workspaceId = pathId(request.workspaceId, 'workspace');
  const projectId = pathId(request.projectId, 'project');
  if (!Number.isInteger(request.limit) || request.limit < 1 || request.limit > maxTaskPageLimit) {
    throw invalid(`limit must be an integer from 1 to ${maxTaskPageLimit}`);
  }
  const page = await renderTaskListKeysetPage(db, {
    workspaceId,
    projectId,
    limit: request.limit,
    after: listKey(request.after),
    filters: taskListFilters(request),
  });
  if (page.found === 'project-missing') throw notFound('project not found');
  if (page.found === 'cursor-foreign') throw invalid('cursor does not belong to this task list');
  return { json: page.json, next: page.next };
}
