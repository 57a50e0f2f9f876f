import { setImmediate as nextRound } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { GetTasksRequest } from '@tws/proto-types/generated/tasks/v1/GetTasksRequest';
import type { GetTasksResponse__Output } from '@tws/proto-types/generated/tasks/v1/GetTasksResponse';
import type { TasksApi } from './backends.js';
import { TaskReader } from './task-reader.js';

const workspaceId = '00000000-0000-4000-8000-000000000001';

/** A tasks service answering every task of a call with its id as the JSON; records the ids of each call. */
function fakeTasks(calls: string[][]): TasksApi {
  const GetTasks = (request: GetTasksRequest): Promise<GetTasksResponse__Output> => {
    const ids = (request.tasks ?? []).map((ref) => String(ref.id));
    calls.push(ids);
    return Promise.resolve({ tasksJson: ids.map((id) => Buffer.from(`"${id}"`)), truncated: false });
  };
  return { GetTasks } as unknown as TasksApi;
}

describe('TaskReader', () => {
  it('sends the reads of two rounds of I/O as one GetTasks call, and a later read as another', async () => {
    const calls: string[][] = [];
    const reader = new TaskReader(fakeTasks(calls));
    const first = reader.read(workspaceId, 'a');
    const second = reader.read(workspaceId, 'b');
    await nextRound();
    const third = reader.read(workspaceId, 'c');
    await nextRound();
    const fourth = reader.read(workspaceId, 'd');
    const answers = await Promise.all([first, second, third, fourth]);
    expect(answers.map((json) => json?.toString())).toEqual(['"a"', '"b"', '"c"', '"d"']);
    expect(calls).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('answers null for a task the tasks service does not have (an empty answer)', async () => {
    const GetTasks = (): Promise<GetTasksResponse__Output> => Promise.resolve({ tasksJson: [Buffer.alloc(0)], truncated: false });
    const reader = new TaskReader({ GetTasks } as unknown as TasksApi);
    expect(await reader.read(workspaceId, 'gone')).toBeNull();
  });
});
