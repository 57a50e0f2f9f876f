import { auditRecord, DomainError, entityTagOf, inTransaction, invalid, notFound, type Pool, type Queryable } from '@tws/common';
import { lockSection } from '../store/projects.js';
import { readTaskForChange, writeTaskChange, type ChangeReferences, type TaskForChange, type TaskWrite } from '../store/task-changes.js';
import { renderTasks } from '../store/task-json.js';
import { nextPositionInSection } from '../store/tasks.js';
import { buildTaskEvent } from './task-event.js';
import { resolveDescription, type DescriptionInput } from './description.js';
import { isUuid } from './identifiers.js';
import type { Task } from './model.js';
import { hasAnyField, planTaskUpdate, type ResolvedUpdate, type TaskState, type UpdatePlan } from './task-update.js';
import { ifMatchTags, pathId, requiredText } from './validation.js';
import { readInBatch, writeInBatch } from './write-batches.js';

export interface UpdateTaskInput {
  workspaceId: string;
  id: string;
  name?: string | undefined;
  listId?: string | undefined;
  isCompleted?: boolean | undefined;
  statusId?: string | undefined;
  assigneeId?: string | undefined;
  clearAssignee: boolean;
  description?: DescriptionInput | undefined;
  /** Strong entity tags of the task's single-task JSON, one of which must be current (empty: no condition). */
  ifMatch?: readonly string[] | undefined;
}

/** A task's single-task JSON (its UTF-8 bytes, as hashed) and its entity tag (GET /v1/tasks/:id's ETag). */
interface Rendering {
  json: Buffer;
  entityTag: string;
}

/**
 * A PATCH's outcome: the task afterwards, and its single-task JSON as rendered in the transaction
 * (what GET /v1/tasks/:id answers for this version) with that JSON's entity tag.
 */
export interface TaskUpdate extends Rendering {
  task: Task;
}

/** Encoded once: the bytes the tag hashes are the bytes answered. */
function renderingOf(text: string): Rendering {
  const json = Buffer.from(text, 'utf8');
  return { json, entityTag: entityTagOf(json) };
}

/** `updatedAt` of a single-task JSON as rendered by Postgres (store/task-json.ts). */
function updatedAtOf(json: string): Date {
  const parsed: unknown = JSON.parse(json);
  const value = typeof parsed === 'object' && parsed !== null && 'updatedAt' in parsed ? parsed.updatedAt : undefined;
  const time = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(time.getTime())) throw new Error('a written task was rendered without its updatedAt');
  return time;
}

/** The task's single-task JSON rendered now, and its entity tag (the caller holds its row lock). */
async function currentRendering(db: Queryable, workspaceId: string, id: string): Promise<Rendering> {
  const [json] = await renderTasks(db, [{ workspaceId, id }]);
  if (json === null || json === undefined) throw notFound('task not found');
  return renderingOf(json);
}

/**
 * Throws ABORTED unless the task's single-task JSON, rendered now (the caller holds its row lock, so
 * no other PATCH can change it before the commit), has one of `tags`: the If-Match check of a PATCH.
 * Returns the current rendering.
 */
async function checkIfMatch(db: Queryable, workspaceId: string, id: string, tags: readonly string[]): Promise<Rendering> {
  const current = await currentRendering(db, workspaceId, id);
  if (!tags.includes(current.entityTag)) {
    throw new DomainError('aborted', 'the task changed since the If-Match entity tag was read; GET it again');
  }
  return current;
}

/** A sent reference id in lower case; null when it is not a UUID (it then matches no row). */
const lookupId = (value: string | undefined): string | null => (isUuid(value) ? value.toLowerCase() : null);

/**
 * The update the PATCH makes to the task as read, with its references checked (in the order the
 * API has always answered them); throws for an invalid reference.
 */
function planChange(read: TaskForChange, input: UpdateTaskInput, fields: ResolvedUpdate, refs: ChangeReferences): UpdatePlan {
  const update: ResolvedUpdate = { ...fields };
  if (input.statusId !== undefined) {
    if (!read.status) throw invalid('statusId is not a status of this workspace');
    update.status = read.status;
  }
  if (input.listId !== undefined) {
    if (refs.listId === null || !read.listInProject) throw invalid("listId does not belong to the task's project");
    update.listId = refs.listId;
  }
  if (input.assigneeId !== undefined) {
    if (refs.assigneeId === null || !read.assigneeIsMember) throw invalid('assigneeId is not a member of this workspace');
    update.assigneeId = refs.assigneeId;
  }
  if (refs.systemType !== null && read.systemStatusId === null) {
    throw new DomainError('failed_precondition', `the workspace has no ${refs.systemType} status`);
  }
  const { task } = read;
  const state: TaskState = {
    name: task.name,
    listId: task.listId,
    isCompleted: task.isCompleted,
    statusId: task.statusId,
    assigneeId: task.assigneeId,
    description: task.description,
  };
  return planTaskUpdate(state, update, () => read.systemStatusId!);
}

/**
 * Writes the planned change and its event if the row is still as read; the task afterwards with the
 * tag of the JSON the write rendered of it (so the tag is of this very version), or null.
 */
async function applyChange(
  write: (change: TaskWrite) => Promise<string | null>,
  read: TaskForChange,
  plan: UpdatePlan,
  position: number,
): Promise<TaskUpdate | null> {
  const updated: Task = { ...read.task, ...plan.next, order: position };
  const { eventId, event, requestId, traceparent } = buildTaskEvent(plan.event!, updated);
  const written = await write({
    id: updated.id,
    workspaceId: updated.workspaceId,
    version: read.version,
    change: {
      name: updated.name,
      sectionId: updated.listId,
      position,
      isCompleted: updated.isCompleted,
      statusId: updated.statusId,
      assigneeId: updated.assigneeId,
      description: plan.changed.includes('description') ? { value: updated.description } : null,
    },
    eventId,
    event,
    requestId,
    traceparent,
    audit: auditRecord({ workspaceId: updated.workspaceId, action: 'task.updated', resourceType: 'task', resourceId: updated.id, changes: plan.changed }),
  });
  if (written === null) return null;
  // The write set updated_at in Postgres: answer the time it wrote, as GET /v1/tasks/:id will show it.
  return { task: { ...updated, updatedAt: updatedAtOf(written) }, ...renderingOf(written) };
}

/**
 * Applies a PATCH; emits `task.completed` / `task.updated` for an effective change and nothing for
 * a no-op. Returns the task as it is afterwards.
 *
 * Optimistic first: one read (task and references), one conditional write (task and event) that
 * applies only if the row is unchanged since the read; no transaction, no lock held across round
 * trips, and concurrent PATCHes of a workspace share those statements (readInBatch, writeInBatch).
 * A move (its position is the end of the target section, which needs that section's lock) or a task
 * changed concurrently takes the locked path: row lock, then section lock. So does a PATCH with
 * `ifMatch`: the tag is checked against the task rendered under the row lock, then written in the
 * same transaction, so of concurrent PATCHes sending the same current tag exactly one applies.
 * The entity tag returned is of the JSON the write rendered in its RETURNING (no extra round trip);
 * a no-op renders it under the row lock (the locked path), so it is never the tag of a later version.
 */
export async function updateTask(pool: Pool, input: UpdateTaskInput): Promise<TaskUpdate> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const id = pathId(input.id, 'task');
  if (input.assigneeId !== undefined && input.clearAssignee) throw invalid('assigneeId and clearAssignee cannot both be set');
  // Input checks that need no database come first, so a bad request fails fast.
  const fields: ResolvedUpdate = {};
  if (input.name !== undefined) fields.name = requiredText(input.name, 'name');
  if (input.isCompleted !== undefined) fields.isCompleted = input.isCompleted;
  if (input.description !== undefined) fields.description = resolveDescription(input.description);
  if (input.clearAssignee) fields.assigneeId = null;
  const anySent =
    hasAnyField(fields) || input.listId !== undefined || input.statusId !== undefined || input.assigneeId !== undefined;
  if (!anySent) throw invalid('no fields to update');
  const ifMatch = ifMatchTags(input.ifMatch);
  const refs: ChangeReferences = {
    statusId: lookupId(input.statusId),
    listId: lookupId(input.listId),
    assigneeId: lookupId(input.assigneeId),
    // The system status isCompleted selects, when no status is sent.
    systemType: input.isCompleted === undefined || input.statusId !== undefined ? null : input.isCompleted ? 'done' : 'todo',
  };
  const planOn = (current: TaskForChange | null): { current: TaskForChange; plan: UpdatePlan } => {
    if (!current) throw notFound('task not found');
    return { current, plan: planChange(current, input, fields, refs) };
  };

  // A conditional PATCH takes the locked path at once: its check and its write share the row lock.
  if (ifMatch.length === 0) {
    const first = planOn(await readInBatch(pool, { workspaceId, id, refs }));
    if (first.plan.event !== null && first.plan.next.listId === first.current.task.listId) {
      const updated = await applyChange((change) => writeInBatch(pool, change), first.current, first.plan, first.current.task.order);
      if (updated) return updated;
    }
  }
  return inTransaction(pool, async (db) => {
    const read = await readTaskForChange(db, workspaceId, id, refs, true);
    const checked = read !== null && ifMatch.length > 0 ? await checkIfMatch(db, workspaceId, id, ifMatch) : null;
    const locked = planOn(read);
    const { current } = locked;
    if (locked.plan.event === null) return { task: current.task, ...(checked ?? (await currentRendering(db, workspaceId, id))) };
    let position = current.task.order;
    if (locked.plan.next.listId !== current.task.listId) {
      // A moved task goes to the end of its new section.
      await lockSection(db, current.task.projectId, locked.plan.next.listId);
      position = await nextPositionInSection(db, locked.plan.next.listId);
    }
    const updated = await applyChange((change) => writeTaskChange(db, change), current, locked.plan, position);
    if (!updated) throw new Error('the locked task row changed');
    return updated;
  });
}
