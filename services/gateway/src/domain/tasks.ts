import type { AttachmentsApi, TasksApi } from '../clients/backends.js';

/**
 * Deletes a task, then removes its attachments (records and objects). The second step never fails
 * the deletion: the task is gone either way, and should that call fail, the attachments service's
 * sweeper removes the attachments of tasks that no longer exist.
 */
export async function deleteTask(
  backends: { tasks: TasksApi; attachments: AttachmentsApi },
  workspaceId: string,
  taskId: string,
  log: { warn(details: object, message: string): void },
): Promise<void> {
  await backends.tasks.DeleteTask({ workspaceId, id: taskId });
  try {
    await backends.attachments.DeleteTaskAttachments({ workspaceId, taskId });
  } catch (error) {
    log.warn({ err: error, taskId }, 'attachments of a deleted task not removed now; the attachments sweeper will');
  }
}
