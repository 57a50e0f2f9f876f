import type { Pool } from '@tws/common';
import { KeyedBatcher } from '@tws/common';
import { readTasksForChange, writeTaskChanges, type ChangeReferences, type TaskForChange, type TaskWrite } from '../store/task-changes.js';
import { createTasks, type CreateOutcome, type NewTask, type SectionKey } from '../store/task-creation.js';
import { freePlanLimits } from './model.js';

interface Creation {
  section: SectionKey;
  task: NewTask;
}

interface Read {
  workspaceId: string;
  id: string;
  refs: ChangeReferences;
}

interface Batchers {
  creations: KeyedBatcher<Creation, CreateOutcome>;
  reads: KeyedBatcher<Read, TaskForChange | null>;
  writes: KeyedBatcher<TaskWrite, string | null>;
}

const perPool = new WeakMap<Pool, Batchers>();

function batchersOf(pool: Pool): Batchers {
  let batchers = perPool.get(pool);
  if (!batchers) {
    batchers = {
      creations: new KeyedBatcher((_key, items) =>
        createTasks(
          pool,
          items[0]!.section,
          items.map((item) => item.task),
          freePlanLimits.tasks,
        ),
      ),
      reads: new KeyedBatcher((_key, reads) => readTasksForChange(pool, reads[0]!.workspaceId, reads)),
      // A failed shared statement (one bad row, or the database gone) counts as "not written" for all
      // of its writes: each caller then retries on its own, locked path, which reports its own error.
      writes: new KeyedBatcher((_key, writes) => writeTaskChanges(pool, writes).catch(() => writes.map(() => null))),
    };
    perPool.set(pool, batchers);
  }
  return batchers;
}

/**
 * Creates a task at the end of `section` (one `create_tasks` call). All creations of a section
 * serialise on its row lock anyway: concurrent ones share a call, so a burst pays one lock hand-over
 * and one commit per batch instead of one per task.
 */
export function createInBatch(pool: Pool, section: SectionKey, task: NewTask): Promise<CreateOutcome> {
  return batchersOf(pool).creations.submit(`${section.workspaceId}/${section.projectId}/${section.sectionId}`, { section, task });
}

/** The unlocked read of a PATCH; concurrent reads in one workspace share one statement. */
export function readInBatch(pool: Pool, read: Read): Promise<TaskForChange | null> {
  return batchersOf(pool).reads.submit(read.workspaceId, read);
}

/**
 * The optimistic write of a PATCH (task and event, if the row is still at the version read);
 * concurrent writes in one workspace share one statement and commit. The task's single-task JSON as
 * written, or null when it was not written.
 */
export function writeInBatch(pool: Pool, write: TaskWrite): Promise<string | null> {
  return batchersOf(pool).writes.submit(write.workspaceId, write);
}
