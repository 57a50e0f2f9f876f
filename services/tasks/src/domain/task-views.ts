import { notFound } from '@tws/common';
import type { Queryable } from '../db/queryable.js';
import { renderTask, renderTaskList } from '../db/task-json.js';
import { pathId } from './validation.js';

/** `GET /v1/tasks/:id`: the task as the API's single-task JSON. */
export async function getTaskJson(db: Queryable, workspaceId: string, id: string): Promise<string> {
  const json = await renderTask(db, pathId(workspaceId, 'workspace'), pathId(id, 'task'));
  if (json === null) throw notFound('task not found');
  return json;
}

/** `GET /v1/projects/:projectId/tasks`: the project's tasks as the API's list JSON. */
export async function listTasksJson(db: Queryable, workspaceId: string, projectId: string): Promise<string> {
  const json = await renderTaskList(db, pathId(workspaceId, 'workspace'), pathId(projectId, 'project'));
  if (json === null) throw notFound('project not found');
  return json;
}
