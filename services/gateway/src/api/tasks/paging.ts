import { z } from 'zod';
import type { ListTaskPageRequest } from '@tws/proto-types/generated/tasks/v1/ListTaskPageRequest';
import type { TaskListKey__Output } from '@tws/proto-types/generated/tasks/v1/TaskListKey';
import { HttpError } from '../../plugins/errors.js';
import { opaqueCursor } from '../schemas/cursor.js';

/*
 * Opt-in paging and filters of GET /v1/projects/:projectId/tasks (issue 21 item 2). Without any of
 * these parameters the route answers the whole list as before; with one, a page.
 */

export const maxPageLimit = 500;
/** A page's size when filters are sent without `limit`. */
export const defaultPageLimit = 100;
const maxCursorLength = 200;

/** A place in a project's task list: the page after it is asked for. */
export interface TaskListCursor {
  projectId: string;
  sectionId: string;
  position: number;
  number: number;
}

const Id = z.guid().max(36);
const int32 = z.int().min(-(2 ** 31)).max(2 ** 31 - 1);
const cursors = opaqueCursor('tws.task-list-cursor.v1', z.tuple([z.literal(1), Id, Id, int32, int32]), maxCursorLength);

/** The checksum part of a cursor with this body (exported for tests). */
export const checkOf = cursors.checkOf;

/**
 * The opaque cursor of a list place (`api/schemas/cursor.ts`): the project is checked against the
 * path, the section against the project.
 */
export const encodeCursor = (cursor: TaskListCursor): string => cursors.encode([1, cursor.projectId, cursor.sectionId, cursor.position, cursor.number]);

/** The place a cursor names, or null for anything `encodeCursor` did not write. */
export function decodeCursor(text: string): TaskListCursor | null {
  const payload = cursors.decode(text);
  if (payload === null) return null;
  const [, projectId, sectionId, position, number] = payload;
  return { projectId: projectId.toLowerCase(), sectionId: sectionId.toLowerCase(), position, number };
}

/** The query of GET /v1/projects/:projectId/tasks; every parameter optional. */
export const TaskListQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(maxPageLimit)
    .optional()
    .meta({ description: `Page size, 1–${maxPageLimit} (${defaultPageLimit} when only filters are sent). A page also stops at about 1 MiB of JSON. The next page is in the \`Link: <…>; rel="next"\` header; no such header = last page.` }),
  cursor: z
    .string()
    .min(1)
    .max(maxCursorLength)
    .optional()
    .meta({ description: 'Opaque: the `cursor` of a `Link` rel="next" URL of this list. Malformed, edited, or of another project: 400.' }),
  isCompleted: z.enum(['true', 'false']).optional().meta({ description: 'Only completed (`true`) or open (`false`) tasks.' }),
  statusId: Id.optional().meta({ description: 'Only tasks in this status.' }),
  assigneeId: z
    .union([z.literal('none'), Id])
    .optional()
    .meta({ description: 'Only tasks assigned to this member `userId`; `none`: only unassigned tasks.' }),
  listId: Id.optional().meta({ description: 'Only tasks of this section.' }),
  updatedSince: z.iso
    .datetime({ offset: true })
    .max(40)
    .optional()
    .meta({ description: 'RFC 3339 date-time: only tasks whose `updatedAt` is at or after it (incremental sync; overlap by a few seconds).' }),
});
export type TaskListQuery = z.output<typeof TaskListQuery>;

const filterNames = ['isCompleted', 'statusId', 'assigneeId', 'listId', 'updatedSince'] as const;

/** Whether the request asks for a page (any paging or filter parameter); otherwise the whole list. */
export const isPaged = (query: TaskListQuery): boolean =>
  query.limit !== undefined || query.cursor !== undefined || filterNames.some((name) => query[name] !== undefined);

/** The ListTaskPage request of a paged query; 400 for a cursor not written for this project's list. */
export function pageRequest(workspaceId: string, projectId: string, query: TaskListQuery): ListTaskPageRequest {
  const request: ListTaskPageRequest = { workspaceId, projectId, limit: query.limit ?? defaultPageLimit };
  if (query.cursor !== undefined) {
    const cursor = decodeCursor(query.cursor);
    if (cursor === null) throw new HttpError(400, 'cursor is malformed');
    if (cursor.projectId !== projectId.toLowerCase()) throw new HttpError(400, 'cursor belongs to another task list');
    request.after = { sectionId: cursor.sectionId, position: cursor.position, number: cursor.number };
  }
  if (query.isCompleted !== undefined) request.isCompleted = query.isCompleted === 'true';
  if (query.statusId !== undefined) request.statusId = query.statusId;
  if (query.assigneeId === 'none') request.unassigned = true;
  else if (query.assigneeId !== undefined) request.assigneeId = query.assigneeId;
  if (query.listId !== undefined) request.listId = query.listId;
  if (query.updatedSince !== undefined) request.updatedSince = query.updatedSince;
  return request;
}

/**
 * The absolute URL of the page after `next` (PUBLIC_BASE_URL, never the request's Host): the same
 * filters and page size, and the cursor.
 */
export function nextPageLink(publicBaseUrl: string, projectId: string, query: TaskListQuery, next: TaskListKey__Output): string {
  const params = new URLSearchParams();
  params.set('limit', String(query.limit ?? defaultPageLimit));
  for (const name of filterNames) {
    const value = query[name];
    if (value !== undefined) params.set(name, value);
  }
  params.set('cursor', encodeCursor({ projectId: projectId.toLowerCase(), ...next }));
  const base = publicBaseUrl.replace(/\/+$/, '');
  return `<${base}/v1/projects/${encodeURIComponent(projectId.toLowerCase())}/tasks?${params.toString()}>; rel="next"`;
}
