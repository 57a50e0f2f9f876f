import type { Label, RichTextNodes, Task } from '../domain/model.js';

/** A task row as `taskColumns` selects it (`t` = tasks), with its labels. */
export interface TaskRow {
  id: string;
  workspace_id: string;
  number: number;
  name: string;
  is_completed: boolean;
  description: RichTextNodes | null;
  section_id: string;
  project_id: string;
  assignee_id: string | null;
  status_id: string | null;
  position: number;
  created_at: Date;
  updated_at: Date;
  labels: Label[];
}

/** The columns of a task (`FROM tasks t`) and its labels by name, one statement's select list. */
export const taskColumns = `t.id, t.workspace_id, t.number, t.name, t.is_completed, t.description, t.section_id,
    t.project_id, t.assignee_id, t.status_id, t.position, t.created_at, t.updated_at,
    coalesce((
      SELECT json_agg(json_build_object('id', l.id, 'name', l.name, 'color', l.color) ORDER BY l.name, l.id)
      FROM task_labels tl JOIN labels l ON l.id = tl.label_id WHERE tl.task_id = t.id
    ), '[]'::json) AS labels`;

/** The domain task of a `TaskRow`. */
export const taskOfRow = (row: TaskRow): Task => ({
  id: row.id,
  workspaceId: row.workspace_id,
  number: row.number,
  name: row.name,
  isCompleted: row.is_completed,
  description: row.description,
  listId: row.section_id,
  projectId: row.project_id,
  assigneeId: row.assignee_id,
  statusId: row.status_id,
  order: row.position,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  labels: row.labels,
});
