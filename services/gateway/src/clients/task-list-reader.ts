import type { Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import type { StreamTasksRequest } from '@tws/proto-types/generated/tasks/v1/StreamTasksRequest';
import type { TasksApi } from './backends.js';
import { StreamedTaskList, type StreamTasksCall } from './streamed-task-list.js';
import { SharedTaskList, type SharedReadKind } from './shared-task-list.js';
import { SameTickCalls } from './same-tick-calls.js';
import type { ListTasksResponse__Output } from '@tws/proto-types/generated/tasks/v1/ListTasksResponse';

interface ListCopy {
  version: string;
  json: Buffer;
}

/** Bytes of rendered lists kept per gateway replica (~230 lists of 300 tasks). */
const maxCopyBytes = 32 * 1024 * 1024;
/**
 * Only a list answered in one message (at most ~1 MiB; a larger one is streamed, and never copied)
 * is kept, so one large project cannot evict every other copy.
 */
const maxCopiedListBytes = 2 * 1024 * 1024;

/**
 * How long a list answered `streamed` is read with StreamTasks straight away, without asking
 * ListTasks first (one gRPC round trip and a size check fewer before its first byte). Only a matter
 * of speed: StreamTasks answers any list, also one that has become small since.
 */
const streamedListMemoryMs = 60_000;

/** Opens a tasks.v1.TasksService.StreamTasks call (clients/backends.ts). */
export type OpenTaskListStream = (request: StreamTasksRequest) => StreamTasksCall;

/** A task list read: its version, and its JSON (null: the list is still at the version the client holds). */
export interface TaskListRead {
  version: string;
  json: Buffer | Readable | null;
}

/**
 * Reads task lists for `GET /v1/projects/:projectId/tasks`, keeping the last rendered copy of each
 * and its version. Every request still asks the tasks service (so it is always current, on every
 * replica): with the version it holds, the answer is "not modified" (no JSON) unless a task of the
 * project changed since, and the copy is served. A list over one message (~1 MiB) is `streamed`:
 * it is read with StreamTasks (one snapshot) and piped to the client chunk by chunk, at the
 * client's pace (streamed-task-list.ts): memory does not grow with the list, and it is never copied.
 *
 * A list this replica saw streamed in the last minute is read with StreamTasks at once, unless the
 * client holds a version (a conditional request).
 *
 * Reads of one large list that come while its StreamTasks call has sent less than 1 MiB share that
 * call (shared-task-list.ts), once the list's version, asked after they came (one ListTasks call,
 * coalesced), is no newer than its snapshot: ten clients resyncing a 50,000-task list after an
 * outage cost one database walk, not ten.
 *
 * A client that holds a version itself (its If-None-Match tag) is asked about when this replica holds
 * no newer copy: still current, the answer is `json: null` and nothing is rendered anywhere.
 */
export class TaskListReader {
  private readonly copies = new LRUCache<string, ListCopy>({
    maxSize: maxCopyBytes,
    sizeCalculation: (copy) => copy.json.length + 100,
  });

  /** Lists last answered `streamed` (bounded; forgotten after `streamedListMemoryMs`). */
  private readonly streamedLists = new LRUCache<string, true>({ max: 10_000, ttl: streamedListMemoryMs });

  /** Concurrent reads of one list at one known version share a ListTasks call (same-tick-calls.ts). */
  private readonly listCalls = new SameTickCalls<ListTasksResponse__Output>();

  /** Streamed lists that reads may still join (shared-task-list.ts `joinable`), by list. */
  private readonly sharedLists = new Map<string, SharedTaskList>();

  constructor(
    private readonly tasks: TasksApi,
    private readonly openStream: OpenTaskListStream,
    /** How long StreamTasks may take to send its first message (GRPC_DEADLINE_MS). */
    private readonly firstMessageMs: number,
    /** Counts each streamed read by how it was served (metric `task_list_stream_reads_total`). */
    private readonly countRead: (kind: SharedReadKind) => void = () => undefined,
  ) {}

  /**
   * The list's version and JSON: a buffer, or for a large list a stream (of one snapshot, whose
   * version it is); null JSON when the list is still at `clientVersion` (a decimal version).
   */
  async read(workspaceId: string, projectId: string, clientVersion?: string): Promise<TaskListRead> {
    const key = `${workspaceId}/${projectId}`;
    // A client that holds a version is asked about first: "not modified" sends nothing at all.
    if (clientVersion === undefined && this.streamedLists.has(key)) return this.streamed(workspaceId, projectId);
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
    if (answer.streamed) {
      this.streamedLists.set(key, true);
      return this.streamed(workspaceId, projectId);
    }
    this.streamedLists.delete(key);
    const newest = this.copies.get(key);
    if (answer.tasksJson.length <= maxCopiedListBytes && (newest === undefined || BigInt(newest.version) < BigInt(answer.version))) {
      this.copies.set(key, { version: answer.version, json: answer.tasksJson });
    }
    return { version: answer.version, json: answer.tasksJson };
  }

  /**
   * The list read with StreamTasks, once its first message came (its version, which may be newer
   * than ListTasks's: the ETag names the snapshot sent). A failure before that is the request's.
   * A call of the same list that may still be joined (`join`) is joined when its snapshot is current.
   */
  private async streamed(workspaceId: string, projectId: string): Promise<TaskListRead> {
    const key = `${workspaceId}/${projectId}`;
    const joinable = this.sharedLists.get(key);
    if (joinable?.joinable === true) {
      const joined = await this.join(joinable, workspaceId, projectId);
      if (joined !== null) return joined;
    }
    const open = (): StreamedTaskList => new StreamedTaskList(this.openStream({ workspaceId, projectId }), this.firstMessageMs);
    const shared: SharedTaskList = new SharedTaskList(open(), open, {
      joiningClosed: () => {
        if (this.sharedLists.get(key) === shared) this.sharedLists.delete(key);
      },
      read: this.countRead,
    });
    this.sharedLists.set(key, shared);
    const json = shared.open();
    try {
      return { version: await shared.version, json };
    } catch (error) {
      json.destroy();
      throw error;
    }
  }

  /**
   * Joins `shared` if its snapshot is at least the list's version asked after this request came (so
   * it holds every write made before it); null when it is older, too late, or failed: read alone
   * then. The version is asked while the shared call's first message is awaited, not after it.
   */
  private async join(shared: SharedTaskList, workspaceId: string, projectId: string): Promise<TaskListRead | null> {
    const ticket = shared.reserve();
    try {
      const [version, current] = await Promise.all([
        shared.version.catch(() => null),
        this.listCalls.ask(`${workspaceId}/${projectId}@0`, () => this.tasks.ListTasks({ workspaceId, projectId, knownVersion: '0' })),
      ]);
      // The list has become small since: answered whole, as any read of it is.
      if (!current.streamed && !current.notModified) return { version: current.version, json: current.tasksJson };
      if (version === null || BigInt(version) < BigInt(current.version)) return null;
      const json = ticket.attach();
      return json === null ? null : { version, json };
    } finally {
      ticket.cancel();
    }
  }
}
