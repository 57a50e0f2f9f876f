import DataLoader from 'dataloader';
import type { TasksApi } from './backends.js';
import { afterIoRounds, batchRounds } from './io-rounds.js';

interface TaskRef {
  workspaceId: string;
  id: string;
}

/** Most tasks asked of the tasks service in one GetTasks call. */
const maxBatchSize = 64;

/**
 * Reads tasks for `GET /v1/tasks/:id`. Requests that arrive while the event loop goes through two
 * rounds of I/O are sent as one GetTasks call (DataLoader, io-rounds.ts; no caching, so every
 * request reads current data): under concurrency, one RPC and one query serve many requests.
 * A failed call fails every request of its batch with that call's error. An answer is bounded in
 * bytes: when the tasks service truncates one (large descriptions), the rest are asked for again.
 */
export class TaskReader {
  private readonly loader: DataLoader<TaskRef, Buffer, TaskRef>;

  constructor(tasks: TasksApi) {
    this.loader = new DataLoader<TaskRef, Buffer, TaskRef>(
      async (refs) => {
        // An answer is bounded in bytes (~4 MiB): a truncated one answers the first tasks, ask for the rest.
        const answers: Buffer[] = [];
        while (answers.length < refs.length) {
          const asked = refs.length - answers.length;
          const { tasksJson, truncated } = await tasks.GetTasks({ tasks: refs.slice(answers.length) });
          if (truncated ? tasksJson.length === 0 || tasksJson.length >= asked : tasksJson.length !== asked) {
            throw new Error(`GetTasks answered ${tasksJson.length} of ${asked} tasks${truncated ? ' (truncated)' : ''}`);
          }
          answers.push(...tasksJson);
        }
        return answers;
      },
      { cache: false, maxBatchSize, batchScheduleFn: afterIoRounds(batchRounds) },
    );
  }

  /** The task as the API's single-task JSON, or null when the workspace has no such task. */
  async read(workspaceId: string, id: string): Promise<Buffer | null> {
    const json = await this.loader.load({ workspaceId, id });
    return json.length === 0 ? null : json;
  }
}
