import { createTasks, type CreateOutcome, type NewTask, type SectionKey } from './task-changes.js';
import type { Queryable } from './queryable.js';

interface Waiting {
  item: NewTask;
  resolve: (outcome: CreateOutcome) => void;
  reject: (error: unknown) => void;
}

/**
 * Groups concurrent task creations of one section into `create_tasks` calls: one call per section
 * is in flight at a time, and the creations that arrive meanwhile go together in the next one. All
 * creations of a section serialise on its row lock anyway; a batch pays for one lock hand-over and
 * one commit instead of one per task. A lone creation is sent at once (no added delay).
 */
export class TaskCreationBatcher {
  /** Per section with a call in flight: the creations waiting for the next call. */
  private readonly queues = new Map<string, Waiting[]>();

  constructor(
    private readonly db: Queryable,
    private readonly freeTaskLimit: number,
    private readonly maxBatch = 100,
  ) {}

  create(section: SectionKey, item: NewTask): Promise<CreateOutcome> {
    return new Promise((resolve, reject) => {
      const key = `${section.workspaceId}/${section.projectId}/${section.sectionId}`;
      const waiting: Waiting = { item, resolve, reject };
      const queue = this.queues.get(key);
      if (queue) {
        queue.push(waiting);
        return;
      }
      this.queues.set(key, []);
      void this.drain(key, section, [waiting]);
    });
  }

  private async drain(key: string, section: SectionKey, first: Waiting[]): Promise<void> {
    const queue = this.queues.get(key)!;
    for (let batch = first; batch.length > 0; batch = queue.splice(0, this.maxBatch)) {
      try {
        const outcomes = await createTasks(
          this.db,
          section,
          batch.map((waiting) => waiting.item),
          this.freeTaskLimit,
        );
        batch.forEach((waiting, index) => waiting.resolve(outcomes[index]!));
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    this.queues.delete(key);
  }
}
