import DataLoader from 'dataloader';
import type { TasksApi } from './backends.js';

interface TaskRef {
  workspaceId: string;
  id: string;
}

/** Most tasks asked of the tasks service in one GetTasks call. */
const maxBatchSize = 64;

/**
 * Rounds of the event loop's I/O a batch stays open for. Under load the requests of one round are
 * about half the connections (those answered by the last call come back together), so a batch open
 * for one round carried ~25 tasks at 50 connections and one for two ~43: a third fewer GetTasks
 * calls, whose fixed cost (a gRPC call in both services and a query) is most of a GET's in the tasks
 * service. The bench's GET row, traced, three runs of each alternating (bench/HISTORY.md session
 * 30): +8 % GETs a second, −22 % tasks-service CPU and ~−7 % gateway CPU a GET, p99 no worse. A
 * third round added nothing. Alone, a request waits one more pass of the loop with nothing to do.
 */
const batchRounds = 2;

/** DataLoader's `batchScheduleFn`: dispatches once `rounds` rounds of I/O (setImmediate) have passed. */
export function afterIoRounds(rounds: number): (dispatch: () => void) => void {
  return (dispatch) => {
    let left = rounds;
    const next = (): void => {
      left -= 1;
      if (left > 0) setImmediate(next);
      else dispatch();
    };
    setImmediate(next);
  };
}

/**
 * Reads tasks for `GET /v1/tasks/:id`. Requests that arrive while the event loop goes through two
 * rounds of I/O are sent as one GetTasks call (DataLoader, `afterIoRounds`; no caching, so every
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
