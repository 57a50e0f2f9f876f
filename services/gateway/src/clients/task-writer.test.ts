import { setImmediate as nextRound } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { UpdateTaskRequest } from '@tws/proto-types/generated/tasks/v1/UpdateTaskRequest';
import type { UpdateTaskResponse__Output } from '@tws/proto-types/generated/tasks/v1/UpdateTaskResponse';
import type { UpdateTasksRequest } from '@tws/proto-types/generated/tasks/v1/UpdateTasksRequest';
import type { UpdateTasksResponse__Output } from '@tws/proto-types/generated/tasks/v1/UpdateTasksResponse';
import type { TasksApi } from './backends.js';
import { TaskWriter } from './task-writer.js';

const workspaceId = '00000000-0000-4000-8000-000000000001';

const answer = (id: string): UpdateTaskResponse__Output => ({ task: null, entityTag: `"${id}"`, taskJson: Buffer.from(`"${id}"`) });

interface Call {
  rpc: string;
  ids: string[];
  jsonOnly?: boolean;
}

const statusError = (code: grpc.status, details: string): grpc.ServiceError =>
  Object.assign(new Error(`${code} ${details}`), { code, details, metadata: new grpc.Metadata() });

/**
 * A tasks service that records which calls carried which task ids. `mostPerCall`: it refuses a
 * bigger UpdateTasks whole (INVALID_ARGUMENT), as a replica older than `json_only` refuses more
 * than 8; `failing`: an UpdateTasks call that carries that id fails with that error.
 */
function fakeTasks(calls: Call[], options: { mostPerCall?: number; failing?: Map<string, grpc.ServiceError> } = {}): TasksApi {
  const UpdateTask = (request: UpdateTaskRequest): Promise<UpdateTaskResponse__Output> => {
    calls.push({ rpc: 'UpdateTask', ids: [String(request.id)] });
    return Promise.resolve(answer(String(request.id)));
  };
  const UpdateTasks = (request: UpdateTasksRequest): Promise<UpdateTasksResponse__Output> => {
    const ids = (request.items ?? []).map((item) => String(item.change?.id));
    calls.push({ rpc: 'UpdateTasks', ids, jsonOnly: request.jsonOnly ?? false });
    if (ids.length > (options.mostPerCall ?? Infinity)) return Promise.reject(statusError(grpc.status.INVALID_ARGUMENT, `at most ${options.mostPerCall} changes per call`));
    const failure = ids.map((id) => options.failing?.get(id)).find((error) => error !== undefined);
    if (failure) return Promise.reject(failure);
    return Promise.resolve({ results: ids.map((id) => ({ updated: answer(id), result: 'updated' as const })) });
  };
  return { UpdateTask, UpdateTasks } as unknown as TasksApi;
}

/** `count` changes made in the same round of the event loop, settled. */
function burst(writer: TaskWriter, count: number): Promise<Array<PromiseSettledResult<UpdateTaskResponse__Output>>> {
  return Promise.allSettled(Array.from({ length: count }, (_, index) => writer.update({ workspaceId, id: `t${index}`, name: `renamed ${index}` })));
}

const idsOf = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, index) => `t${from + index}`);

describe('TaskWriter', () => {
  it('sends the changes of two rounds of I/O as one UpdateTasks call, and a later lone change as UpdateTask', async () => {
    const calls: Call[] = [];
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
      { rpc: 'UpdateTasks', ids: ['a', 'b'], jsonOnly: true },
      { rpc: 'UpdateTask', ids: ['c'] },
    ]);
  });

  it('sends up to 24 changes a call, asking for the task JSON only', async () => {
    const calls: Call[] = [];
    const settled = await burst(new TaskWriter(fakeTasks(calls)), 30);
    expect(settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.entityTag : 'failed'))).toEqual(idsOf(0, 30).map((id) => `"${id}"`));
    expect(calls).toEqual([
      { rpc: 'UpdateTasks', ids: idsOf(0, 24), jsonOnly: true },
      { rpc: 'UpdateTasks', ids: idsOf(24, 30), jsonOnly: true },
    ]);
  });

  it('sends them 8 a call to a replica that refuses more (older than json_only), each answer its own', async () => {
    const calls: Call[] = [];
    const settled = await burst(new TaskWriter(fakeTasks(calls, { mostPerCall: 8 })), 20);
    expect(settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.entityTag : 'failed'))).toEqual(idsOf(0, 20).map((id) => `"${id}"`));
    expect(calls.map((call) => call.ids)).toEqual([idsOf(0, 20), idsOf(0, 8), idsOf(8, 16), idsOf(16, 20)]);
  });

  it('a slice that fails fails its own changes only; one a replica without UpdateTasks answers goes one by one', async () => {
    const calls: Call[] = [];
    const failing = new Map([
      ['t3', statusError(grpc.status.UNAVAILABLE, 'database unavailable, retry later')],
      ['t12', statusError(grpc.status.UNIMPLEMENTED, 'unknown method')],
    ]);
    const settled = await burst(new TaskWriter(fakeTasks(calls, { mostPerCall: 8, failing })), 20);
    const outcomes = settled.map((outcome) => (outcome.status === 'fulfilled' ? 'ok' : (outcome.reason as grpc.ServiceError).code));
    expect(outcomes).toEqual([...idsOf(0, 8).map(() => grpc.status.UNAVAILABLE), ...idsOf(8, 20).map(() => 'ok')]);
    expect(calls.filter((call) => call.rpc === 'UpdateTask').map((call) => call.ids[0])).toEqual(idsOf(8, 16));
  });
});
