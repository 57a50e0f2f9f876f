import { setImmediate as nextRound } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { UpdateTaskRequest } from '@tws/proto-types/generated/tasks/v1/UpdateTaskRequest';
import type { UpdateTaskResponse__Output } from '@tws/proto-types/generated/tasks/v1/UpdateTaskResponse';
import type { UpdateTasksRequest } from '@tws/proto-types/generated/tasks/v1/UpdateTasksRequest';
import type { UpdateTasksResponse__Output } from '@tws/proto-types/generated/tasks/v1/UpdateTasksResponse';
import type { TasksApi } from './backends.js';
import { TaskWriter } from './task-writer.js';

const workspaceId = '00000000-0000-4000-8000-000000000001';

const answer = (id: string): UpdateTaskResponse__Output => ({ task: null, entityTag: `"${id}"`, taskJson: Buffer.from(`"${id}"`) });

/** A tasks service that records which calls carried which task ids. */
function fakeTasks(calls: Array<{ rpc: string; ids: string[] }>): TasksApi {
  const UpdateTask = (request: UpdateTaskRequest): Promise<UpdateTaskResponse__Output> => {
    calls.push({ rpc: 'UpdateTask', ids: [String(request.id)] });
    return Promise.resolve(answer(String(request.id)));
  };
  const UpdateTasks = (request: UpdateTasksRequest): Promise<UpdateTasksResponse__Output> => {
    const ids = (request.items ?? []).map((item) => String(item.change?.id));
    calls.push({ rpc: 'UpdateTasks', ids });
    return Promise.resolve({ results: ids.map((id) => ({ updated: answer(id), result: 'updated' as const })) });
  };
  return { UpdateTask, UpdateTasks } as unknown as TasksApi;
}

describe('TaskWriter', () => {
  it('sends the changes of two rounds of I/O as one UpdateTasks call, and a later lone change as UpdateTask', async () => {
    const calls: Array<{ rpc: string; ids: string[] }> = [];
    const writer = new TaskWriter(fakeTasks(calls));
    const change = (id: string): Promise<UpdateTaskResponse__Output> => writer.update({ workspaceId, id, name: `renamed ${id}` });
    const first = change('a');
    await nextRound();
    const second = change('b');
    await nextRound();
    const third = change('c');
    const answers = await Promise.all([first, second, third]);
    expect(answers.map((updated) => updated.entityTag)).toEqual(['"a"', '"b"', '"c"']);
    expect(calls).toEqual([
      { rpc: 'UpdateTasks', ids: ['a', 'b'] },
      { rpc: 'UpdateTask', ids: ['c'] },
    ]);
  });
});
