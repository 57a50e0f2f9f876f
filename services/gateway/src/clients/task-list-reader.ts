import { Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import type { ListTasksResponse__Output } from '@tws/proto-types/generated/tasks/v1/ListTasksResponse';
import type { TasksApi } from './backends.js';
import { SameTickCalls } from './same-tick-calls.js';

interface ListCopy {
  version: string;
  json: Buffer;
}

/** Bytes of rendered lists kept per gateway replica (~230 lists of 300 tasks). */
const maxCopyBytes = 32 * 1024 * 1024;
/**
 * Only a list answered in one message (at most ~1 MiB; a larger one comes in pages) is kept, so one
 * large project cannot evict every other copy.
 */
const maxCopiedListBytes = 2 * 1024 * 1024;
/** Bytes of a paged list buffered towards the client: about one page is read ahead, no more. */
const pagedHighWaterMark = 64 * 1024;

/** A task list read: its version, and its JSON (null: the list is still at the version the client holds). */
export interface TaskListRead {
  version: string;
  json: Buffer | Readable | null;
}

/**
 * Reads task lists for `GET /v1/projects/:projectId/tasks`, keeping the last rendered copy of each
 * and its version. Every request still asks the tasks service (so it is always current, on every
 * replica): with the version it holds, the answer is "not modified" (no JSON) unless a task of the
 * project changed since, and the copy is served. A list over one message (~1 MiB) is answered in
 * pages, streamed to the client as they are read: memory does not grow with the list.
 *
 * A client that holds a version itself (its If-None-Match tag) is asked about when this replica holds
 * no newer copy: still current, the answer is `json: null` and nothing is rendered anywhere.
 */
export class TaskListReader {
  private readonly copies = new LRUCache<string, ListCopy>({
    maxSize: maxCopyBytes,
    sizeCalculation: (copy) => copy.json.length + 100,
  });

  /** Concurrent reads of one list at one known version share a ListTasks call (same-tick-calls.ts). */
  private readonly listCalls = new SameTickCalls<ListTasksResponse__Output>();

  constructor(private readonly tasks: TasksApi) {}

  /**
   * The list's version and JSON: a buffer, or for a paged list a stream (which fails if the list
   * changes meanwhile); null JSON when the list is still at `clientVersion` (a decimal version).
   */
  async read(workspaceId: string, projectId: string, clientVersion?: string): Promise<TaskListRead> {
    const key = `${workspaceId}/${projectId}`;
    const copy = this.copies.get(key);
    const askClient = clientVersion !== undefined && (copy === undefined || BigInt(clientVersion) > BigInt(copy.version));
    const knownVersion = askClient ? clientVersion : (copy?.version ?? '0');
    const answer = await this.listCalls.ask(`${key}@${knownVersion}`, () => this.tasks.ListTasks({ workspaceId, projectId, knownVersion }));
    if (answer.notModified) {
      if (answer.version !== knownVersion) throw new Error('ListTasks answered not modified for another version than asked');
      if (askClient) return { version: answer.version, json: null };
      if (copy === undefined) throw new Error('ListTasks answered not modified for a version this gateway does not hold');
      return { version: copy.version, json: copy.json };
    }
    if (answer.nextOffset > 0) {
      const json = Readable.from(this.pages(workspaceId, projectId, answer), { objectMode: false, highWaterMark: pagedHighWaterMark });
      return { version: answer.version, json };
    }
    const newest = this.copies.get(key);
    if (answer.tasksJson.length <= maxCopiedListBytes && (newest === undefined || BigInt(newest.version) < BigInt(answer.version))) {
      this.copies.set(key, { version: answer.version, json: answer.tasksJson });
    }
    return { version: answer.version, json: answer.tasksJson };
  }

  /** `[` + each page's tasks, comma separated + `]`; the next page is asked for once the last is sent. */
  private async *pages(workspaceId: string, projectId: string, first: ListTasksResponse__Output): AsyncGenerator<Buffer> {
    yield first.tasksJson.subarray(0, -1);
    let offset = first.nextOffset;
    while (offset > 0) {
      const page = await this.tasks.ListTasks({ workspaceId, projectId, knownVersion: '0', offset });
      if (page.notModified || page.version !== first.version) throw new Error('task list changed while it was read in pages');
      const tasks = page.tasksJson.subarray(1, -1);
      if (tasks.length === 0) throw new Error('ListTasks answered an empty page of a paged list');
      yield Buffer.from(',');
      yield tasks;
      offset = page.nextOffset;
    }
    yield Buffer.from(']');
  }
}
