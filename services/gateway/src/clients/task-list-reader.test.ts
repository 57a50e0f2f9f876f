import type { Readable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { FakeStreamCall, streamChunk } from '../testing/fake-stream-call.js';
import type { StreamTasksCall } from './streamed-task-list.js';
import type { ListTasksRequest } from '@tws/proto-types/generated/tasks/v1/ListTasksRequest';
import type { ListTasksResponse__Output } from '@tws/proto-types/generated/tasks/v1/ListTasksResponse';
import type { TasksApi } from './backends.js';
import { TaskListReader } from './task-list-reader.js';

/** A tasks service holding one list at `version`: not modified when asked with it; `streamed` when too large. */
function fakeTasks(state: { version: string; json: string; streamed?: boolean }, asked: string[]): TasksApi {
  const ListTasks = (request: ListTasksRequest): Promise<ListTasksResponse__Output> => {
    asked.push(String(request.knownVersion));
    const notModified = String(request.knownVersion) === state.version;
    return Promise.resolve({
      version: state.version,
      notModified,
      tasksJson: notModified || state.streamed === true ? Buffer.alloc(0) : Buffer.from(state.json),
      streamed: !notModified && state.streamed === true,
    });
  };
  return { ListTasks } as unknown as TasksApi;
}

describe('TaskListReader', () => {
  it('serves its copy while current, and asks with the client version when it holds no newer copy', async () => {
    const state = { version: '5', json: '[1]' };
    const asked: string[] = [];
    const reader = new TaskListReader(fakeTasks(state, asked), () => {
      throw new Error('a list of one message is not streamed');
    }, 1000);

    // No copy, a current client version: nothing rendered, json null.
    expect(await reader.read('w', 'p', '5')).toEqual({ version: '5', json: null });
    // No copy, no client version: rendered and kept.
    expect(await reader.read('w', 'p')).toEqual({ version: '5', json: Buffer.from('[1]') });
    // A copy at 5 and an older client version: asked with the copy's version, the copy is served.
    expect(await reader.read('w', 'p', '3')).toEqual({ version: '5', json: Buffer.from('[1]') });
    // The list moved on: a client at 5 gets the new list.
    Object.assign(state, { version: '6', json: '[1,2]' });
    expect(await reader.read('w', 'p', '5')).toEqual({ version: '6', json: Buffer.from('[1,2]') });
    // A client newer than the copy is asked about itself.
    Object.assign(state, { version: '7', json: '[1,2,3]' });
    expect(await reader.read('w', 'p', '7')).toEqual({ version: '7', json: null });
    expect(asked).toEqual(['5', '0', '5', '5', '7']);
  });
});

describe('TaskListReader: concurrent reads', () => {
  it('reads of one list arriving together share one ListTasks call; a read after it was sent asks again', async () => {
    const state = { version: '5', json: '[1]' };
    const asked: string[] = [];
    const reader = new TaskListReader(fakeTasks(state, asked), () => {
      throw new Error('a list of one message is not streamed');
    }, 1000);
    const together = await Promise.all([reader.read('w', 'p'), reader.read('w', 'p'), reader.read('w', 'p'), reader.read('w', 'other')]);
    expect(together.map((read) => read.json?.toString())).toEqual(['[1]', '[1]', '[1]', '[1]']);
    expect(asked).toEqual(['0', '0']);
    // The list changes; a read that starts now is not served by a call sent before it.
    Object.assign(state, { version: '6', json: '[1,2]' });
    const first = reader.read('w', 'p');
    await new Promise((resolve) => setImmediate(resolve));
    const later = reader.read('w', 'p');
    expect((await first).json?.toString()).toBe('[1,2]');
    expect((await later).json?.toString()).toBe('[1,2]');
    expect(asked).toEqual(['0', '0', '5', '6']);
  });
});

describe('TaskListReader: large lists', () => {
  it('a list answered streamed is read with StreamTasks at once next time, unless the client holds a version', async () => {
    const state = { version: '8', json: '', streamed: true };
    const asked: string[] = [];
    const streams: string[] = [];
    const openStream = (request: { projectId?: string }): StreamTasksCall => {
      streams.push(String(request.projectId));
      const call = new FakeStreamCall();
      // Once the reader listens, as a real call answers.
      setImmediate(() => {
        call.push(streamChunk('[1,', '8'));
        call.push(streamChunk('2]'));
        call.finish(grpc.status.OK);
      });
      return call as unknown as StreamTasksCall;
    };
    const reader = new TaskListReader(fakeTasks(state, asked), openStream, 1000);
    const text = async (read: { json: Buffer | Readable | null }): Promise<string> => {
      const parts: Buffer[] = [];
      for await (const part of read.json as Readable) parts.push(part as Buffer);
      return Buffer.concat(parts).toString();
    };

    // First read: ListTasks says streamed, then StreamTasks.
    expect(await text(await reader.read('w', 'p'))).toBe('[1,2]');
    expect([asked, streams]).toEqual([['0'], ['p']]);
    // Second read: straight to StreamTasks.
    const again = await reader.read('w', 'p');
    expect(again.version).toBe('8');
    expect(await text(again)).toBe('[1,2]');
    expect([asked, streams]).toEqual([['0'], ['p', 'p']]);
    // A conditional read asks ListTasks first (a current client gets nothing).
    expect(await reader.read('w', 'p', '8')).toEqual({ version: '8', json: null });
    expect([asked, streams]).toEqual([['0', '8'], ['p', 'p']]);
    // Once the list is answered in one message, it is no longer streamed at once.
    Object.assign(state, { version: '9', json: '[1]', streamed: false });
    expect(await reader.read('w', 'p', '8')).toEqual({ version: '9', json: Buffer.from('[1]') });
    expect(await reader.read('w', 'p')).toEqual({ version: '9', json: Buffer.from('[1]') });
    expect([asked, streams]).toEqual([['0', '8', '8', '9'], ['p', 'p']]);
  });
});

describe('TaskListReader: reads of one large list at once', () => {
  /** StreamTasks calls answered (once the reader listens) with `state`'s version and a two-chunk list. */
  function streams(state: { version: string }, opened: string[]): (request: { projectId?: string }) => StreamTasksCall {
    return (request) => {
      opened.push(String(request.projectId));
      const call = new FakeStreamCall();
      const version = state.version;
      setImmediate(() => {
        call.push(streamChunk(`[${version},`, version));
        call.push(streamChunk('2]'));
        call.finish(grpc.status.OK);
      });
      return call as unknown as StreamTasksCall;
    };
  }
  const text = async (read: { json: Buffer | Readable | null }): Promise<string> => {
    const parts: Buffer[] = [];
    for await (const part of read.json as Readable) parts.push(part as Buffer);
    return Buffer.concat(parts).toString();
  };

  it('share one StreamTasks call once a ListTasks call asked after they came found its snapshot current; a read after it ended opens its own', async () => {
    const state = { version: '8', json: '', streamed: true };
    const asked: string[] = [];
    const opened: string[] = [];
    const kinds: string[] = [];
    const reader = new TaskListReader(fakeTasks(state, asked), streams(state, opened), 1000, (kind) => kinds.push(kind));
    // The first read learns the list is streamed; the next ones go straight to StreamTasks.
    expect(await text(await reader.read('w', 'p'))).toBe('[8,2]');
    const together = await Promise.all([reader.read('w', 'p'), reader.read('w', 'p'), reader.read('w', 'p')]);
    expect(await Promise.all(together.map(text))).toEqual(['[8,2]', '[8,2]', '[8,2]']);
    expect(together.map((read) => read.version)).toEqual(['8', '8', '8']);
    // One call for the three, and one check of the list's version (coalesced) for the two that joined.
    expect(opened).toEqual(['p', 'p']);
    expect(asked).toEqual(['0', '0']);
    expect(kinds).toEqual(['opened', 'opened', 'joined', 'joined']);
    // Later reads of the same list open a call of their own.
    expect(await text(await reader.read('w', 'p'))).toBe('[8,2]');
    expect(opened).toHaveLength(3);
  });

  it('a read whose check finds the list changed since the shared snapshot reads it on its own call', async () => {
    const state = { version: '8', json: '', streamed: true };
    const asked: string[] = [];
    const opened: string[] = [];
    const tasks = fakeTasks(state, asked);
    // The list changes between the shared call's snapshot and the joiner's check.
    let change: Partial<typeof state> | undefined;
    const changing: TasksApi = {
      ListTasks: (request: ListTasksRequest) => {
        if (change !== undefined) Object.assign(state, change);
        change = undefined;
        return tasks.ListTasks(request);
      },
    } as unknown as TasksApi;
    const reader = new TaskListReader(changing, streams(state, opened), 1000);
    await text(await reader.read('w', 'p'));
    change = { version: '9' };
    const [first, second] = await Promise.all([reader.read('w', 'p'), reader.read('w', 'p')]);
    expect([first.version, second.version]).toEqual(['8', '9']);
    expect([await text(first), await text(second)]).toEqual(['[8,2]', '[9,2]']);
    expect(opened).toHaveLength(3);

    // The list became small meanwhile: the joiner gets it whole, as any read of it would.
    change = { version: '10', json: '[1]', streamed: false };
    const [opener, small] = await Promise.all([reader.read('w', 'p'), reader.read('w', 'p')]);
    expect(small).toEqual({ version: '10', json: Buffer.from('[1]') });
    expect(await text(opener)).toBe('[9,2]');
  });
});
