import type { Queryable } from '@tws/common';
import type { Project, Task } from '../domain/model.js';
import { taskColumns, taskOfRow, type TaskRow } from './task-row.js';

interface TaskByNumberRow extends TaskRow {
  project_name: string;
  project_description: string | null;
  task_prefix: string;
  project_version: string;
}

/**
 * A task by (workspace, project task prefix, number), read only when `userId` is a member of the
 * workspace: one statement, so "not a member" and "no such task" are the same empty answer.
 */
export async function readTaskByNumber(
  db: Queryable,
  input: { workspaceId: string; userId: string; taskPrefix: string; number: number },
): Promise<{ task: Task; project: Project } | null> {
  const { rows } = await db.query<TaskByNumberRow>({
    name: 'tasks-read-task-by-number',
    text: `SELECT ${taskColumns},
             p.name AS project_name, p.description AS project_description, p.task_prefix, p.version::text AS project_version
           FROM members m
           JOIN projects p ON p.workspace_id = m.workspace_id AND p.task_prefix = $3
           JOIN tasks t ON t.project_id = p.id AND t.number = $4
           WHERE m.workspace_id = $1 AND m.user_id = $2`,
    values: [input.workspaceId, input.userId, input.taskPrefix, input.number],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    task: taskOfRow(row),
    project: { id: row.project_id, name: row.project_name, description: row.project_description, taskPrefix: row.task_prefix, version: row.project_version },
  };
}
