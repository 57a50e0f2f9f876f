import { isDeepStrictEqual } from 'node:util';
import { invalid } from '@tws/common';
import type { TaskEventKind } from '@tws/contracts';
import type { RichTextNodes, SystemType } from './model.js';

/** The mutable state of a task. */
export interface TaskState {
  name: string;
  listId: string;
  isCompleted: boolean;
  statusId: string | null;
  assigneeId: string | null;
  description: RichTextNodes | null;
}

/** A PATCH after its references were resolved (each field present = sent). */
export interface ResolvedUpdate {
  name?: string;
  listId?: string;
  isCompleted?: boolean;
  status?: { id: string; systemType: SystemType | null };
  assigneeId?: string | null;
  description?: RichTextNodes | null;
}

export interface UpdatePlan {
  next: TaskState;
  changed: Array<keyof TaskState>;
  /** The event the change emits; null when nothing effectively changed. */
  event: Extract<TaskEventKind, 'task.updated' | 'task.completed'> | null;
}

/** Whether the request sends at least one field. */
export function hasAnyField(update: ResolvedUpdate): boolean {
  return Object.values(update).some((value) => value !== undefined);
}

/**
 * Applies a PATCH to a task's state, keeping `isCompleted` and `statusId` in step:
 * `isCompleted` selects the matching system status (true → done, false → todo); a status with a
 * system type sets `isCompleted` from it; a custom status sets `isCompleted` false; both sent and
 * disagreeing is invalid. The event is `task.completed` when `isCompleted` turns false → true,
 * `task.updated` for any other effective change, none when nothing changed.
 *
 * `systemStatus(type)` gives the id of the workspace's `todo` / `done` status.
 */
export function planTaskUpdate(
  current: TaskState,
  update: ResolvedUpdate,
  systemStatus: (type: SystemType) => string,
): UpdatePlan {
  if (!hasAnyField(update)) throw invalid('no fields to update');
  const next: TaskState = { ...current };
  if (update.name !== undefined) next.name = update.name;
  if (update.listId !== undefined) next.listId = update.listId;
  if (update.assigneeId !== undefined) next.assigneeId = update.assigneeId;
  if (update.description !== undefined) next.description = update.description;

  if (update.status !== undefined) {
    const completed = update.status.systemType === 'done';
    if (update.isCompleted !== undefined && update.isCompleted !== completed) {
      throw invalid(
        update.status.systemType === null
          ? 'isCompleted cannot be true with a custom status'
          : `isCompleted ${String(update.isCompleted)} disagrees with a ${update.status.systemType} status`,
      );
    }
    next.statusId = update.status.id;
    next.isCompleted = completed;
  } else if (update.isCompleted !== undefined) {
    next.isCompleted = update.isCompleted;
    next.statusId = systemStatus(update.isCompleted ? 'done' : 'todo');
  }

  const changed = (Object.keys(next) as Array<keyof TaskState>).filter((key) => !isDeepStrictEqual(next[key], current[key]));
  let event: UpdatePlan['event'] = null;
  if (changed.length > 0) event = !current.isCompleted && next.isCompleted ? 'task.completed' : 'task.updated';
  return { next, changed, event };
}
