import { LRUCache } from 'lru-cache';
import type { TasksApi } from './tasks-api.js';

interface ListCopy {
  version: string;
  json: Buffer;
}

/** Bytes of rendered lists kept per gateway replica (~230 lists of 300 tasks). */
const maxCopyBytes = 32 * 1024 * 1024;

/**
 * Reads task lists for `GET /v1/projects/:projectId/tasks`, keeping the last rendered copy of each
 * and its version. Every request still asks the tasks service (so it is always current, on every
 * replica): with the version it holds, the answer is "not modified" (no JSON) unless a task of the
 * project changed since, and the copy is served.
 */
export class TaskListReader {
  private readonly copies = new LRUCache<string, ListCopy>({
    maxSize: maxCopyBytes,
    sizeCalculation: (copy) => copy.json.length + 100,
  });

  constructor(private readonly tasks: TasksApi) {}

  async read(workspaceId: string, projectId: string): Promise<Buffer> {
    const key = `${workspaceId}/${projectId}`;
    const copy = this.copies.get(key);
    const answer = await this.tasks.ListTasks({ workspaceId, projectId, knownVersion: copy?.version ?? '0' });
    if (answer.notModified) {
      if (copy === undefined || copy.version !== answer.version) throw new Error('ListTasks answered not modified for a version this gateway does not hold');
      return copy.json;
    }
    const newest = this.copies.get(key);
    if (newest === undefined || BigInt(newest.version) < BigInt(answer.version)) {
      this.copies.set(key, { version: answer.version, json: answer.tasksJson });
    }
    return answer.tasksJson;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Task lists with a per-replica copy validated on every request (GET /v1/projects/:id/tasks). */
    taskListReader: TaskListReader;
  }
}
