import type { Queryable } from '@tws/common';
import { listPageBytes } from './task-json.js';

/** A place in a project's task list: the section, then the task's position and number in it. */
export interface TaskListKey {
  sectionId: string;
  position: number;
  number: number;
}

/** Filters of the paged list, combined with AND; absent = no condition. */
export interface TaskListFilters {
  isCompleted?: boolean | undefined;
  statusId?: string | undefined;
  /** A member userId, or null for tasks without an assignee. */
  assigneeId?: string | null | undefined;
  listId?: string | undefined;
  updatedSince?: Date | undefined;
}

export interface TaskListPageQuery {
  workspaceId: string;
  projectId: string;
  limit: number;
  /** The page stops at about this many bytes of JSON (at least one task); `listPageBytes` when absent. */
  maxBytes?: number;
  after: TaskListKey | null;
  filters: TaskListFilters;
}

export type TaskListPage =
  | { found: 'project-missing' }
  | { found: 'cursor-foreign' }
  | { found: 'page'; json: string; next: TaskListKey | null };

/*
 * Keyset paging in the list's display order (store/task-json.ts `displayOrder`: section position,
 * creation, id; task position, number). Sections are only appended and never reordered or removed,
 * and a task's (position, number) only changes when it is moved to the end of a section, so a key
 * stays a fixed place in the order: tasks created between two pages go after their section's last
 * task and never shift a task already served or still to come. The walk goes section by section in
 * order (sections_project_position_idx), and in each section through tasks_section_position_number_idx
 * with at most limit + 1 rows: the work is bounded by the page size and the number of sections, not
 * by the project's task count (filters are residual conditions of that index walk, so a selective
 * filter on a huge section reads that section's index; a section's tasks are always the project's:
 * `secs` holds only the project's sections). A page also stops at about `listPageBytes` of
 * JSON (at least one task), so 500 tasks with 1 MiB descriptions never make one 500 MiB message.
 */
export const pageSql = `
  WITH proj AS (
    SELECT p.id FROM projects p WHERE p.workspace_id = $1 AND p.id = $2
  ), cur AS (
    SELECT s.id, s.position, s.created_at FROM sections s JOIN proj ON s.project_id = proj.id WHERE s.id = $3::uuid
  ), secs AS (
    SELECT s.id, s.position, s.created_at FROM sections s JOIN proj ON s.project_id = proj.id
    WHERE ($3::uuid IS NULL OR (s.position, s.created_at, s.id) >= (SELECT c.position, c.created_at, c.id FROM cur c))
      AND ($10::uuid IS NULL OR s.id = $10::uuid)
  ), page AS (
    SELECT t.list_json, t.section_id, t.position, t.number, s.position AS s_position, s.created_at AS s_created_at
    FROM secs s CROSS JOIN LATERAL (
      SELECT t.list_json, t.section_id, t.position, t.number FROM tasks t
      WHERE t.section_id = s.id
        -- After the cursor in its own section, from the start in the following ones: one row
        -- comparison the index (section_id, position, number) starts its walk at (migration 019), so
        -- a page reads limit + 1 index entries wherever the cursor stands (an OR here was a filter
        -- over every entry before the cursor: pages grew slower towards a long section's end).
        AND (t.position, t.number) > (CASE WHEN s.id = $3::uuid THEN $4::int ELSE -2147483648 END,
                                      CASE WHEN s.id = $3::uuid THEN $5::int ELSE -2147483648 END)
        AND ($6::bool IS NULL OR t.is_completed = $6::bool)
        AND ($7::uuid IS NULL OR t.status_id = $7::uuid)
        AND (NOT $8::bool OR t.assignee_id IS NULL)
        AND ($9::uuid IS NULL OR t.assignee_id = $9::uuid)
        AND ($11::timestamptz IS NULL OR t.updated_at >= $11::timestamptz)
      ORDER BY t.position, t.number LIMIT $12::int + 1
    ) t
    ORDER BY s.position, s.created_at, s.id, t.position, t.number LIMIT $12::int + 1
  ), numbered AS (
    SELECT r.list_json, r.section_id, r.position, r.number, row_number() OVER w AS ord,
           sum(octet_length(r.list_json)) OVER w - octet_length(r.list_json) AS bytes_before
    FROM page r WINDOW w AS (ORDER BY r.s_position, r.s_created_at, r.section_id, r.position, r.number)
  ), kept AS (
    SELECT * FROM numbered n WHERE n.ord <= $12::int AND (n.ord = 1 OR n.bytes_before < $13::bigint)
  )
  SELECT EXISTS (SELECT 1 FROM proj) AS project_found,
         ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM cur)) AS cursor_found,
         '[' || coalesce((SELECT string_agg(k.list_json, ',' ORDER BY k.ord) FROM kept k), '') || ']' AS json,
         (SELECT count(*) FROM page) > (SELECT count(*) FROM kept) AS more,
         (SELECT json_build_object('sectionId', k.section_id, 'position', k.position, 'number', k.number)
          FROM kept k ORDER BY k.ord DESC LIMIT 1) AS last`;

interface PageRow {
  project_found: boolean;
  cursor_found: boolean;
  json: string;
  more: boolean;
  last: TaskListKey | null;
}

/** One page of the project's task list (list-shape JSON array) and the key to continue after, in one statement. */
export async function renderTaskListKeysetPage(db: Queryable, query: TaskListPageQuery): Promise<TaskListPage> {
  const { after, filters } = query;
  const { rows } = await db.query<PageRow>({
    name: 'tasks-render-task-list-keyset-page',
    text: pageSql,
    values: [
      query.workspaceId,
      query.projectId,
      after?.sectionId ?? null,
      after?.position ?? 0,
      after?.number ?? 0,
      filters.isCompleted ?? null,
      filters.statusId ?? null,
      filters.assigneeId === null,
      filters.assigneeId ?? null,
      filters.listId ?? null,
      filters.updatedSince ?? null,
      query.limit,
      query.maxBytes ?? listPageBytes,
    ],
  });
  const row = rows[0];
  if (row === undefined || !row.project_found) return { found: 'project-missing' };
  if (!row.cursor_found) return { found: 'cursor-foreign' };
  return { found: 'page', json: row.json, next: row.more ? row.last : null };
}
