import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { call, fakeCredentials, ids, RpcFailure, startGateway, validApiKey, type Harness } from '../../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startGateway();
  fakeCredentials(h.fake);
});
afterAll(async () => h.close());
beforeEach(() => {
  h.fake.calls.length = 0;
});

const key = { apiKey: validApiKey };
const task = (id: string, name: string) => ({ id, number: 7, name, isCompleted: false, listId: ids.section, order: 0, createdAt: '2026-11-22T09:30:00.000Z', projectId: ids.project, labels: [] });
const otherSection = '00000000-0000-4000-8000-00000000beef';
const taskIds = ['00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-0000000000a2', '00000000-0000-4000-8000-0000000000a3'];

type Item = { origin: { requestId: string; traceparent: string } };

describe('coalesced task writes (clients/task-writer.ts)', () => {
  test('concurrent POST /v1/tasks share one CreateTasks call; each answer, and each failure, is its own request\'s', async () => {
    h.fake.handlers.set('CreateTasks', (request) => ({
      results: (request.items as Array<Item & { task: { name: string; listId: string } }>).map((item, index) =>
        item.task.listId === otherSection
          ? { error: { code: grpc.status.INVALID_ARGUMENT, details: 'listId does not belong to projectId' } }
          : { created: { id: taskIds[index], number: 10 + index } },
      ),
    }));
    const post = (name: string, listId: string, requestId: string) =>
      call(h.app, 'POST', '/v1/tasks', { ...key, headers: { 'x-request-id': requestId }, body: { projectId: ids.project, listId, name } });
    const responses = await Promise.all([post('a', ids.section, 'req-a'), post('b', otherSection, 'req-b'), post('c', ids.section, 'req-c')]);
    expect(responses.map((response) => [response.status, response.json])).toEqual([
      [201, { id: taskIds[0], number: 10 }],
      [400, { error: 'listId does not belong to projectId' }],
      [201, { id: taskIds[2], number: 12 }],
    ]);
    const [batch, ...more] = h.fake.callsOf('CreateTasks') as Array<{ items: Array<Item & { task: Record<string, unknown> }> }>;
    expect(more).toEqual([]);
    expect(h.fake.callsOf('CreateTask')).toEqual([]);
    expect(batch?.items.map((item) => [item.task.name, item.task.workspaceId, item.origin.requestId])).toEqual([
      ['a', ids.workspace, 'req-a'],
      ['b', ids.workspace, 'req-b'],
      ['c', ids.workspace, 'req-c'],
    ]);
  });

  test('a lone POST uses CreateTask; a failed coalesced call fails each of its requests', async () => {
    h.fake.handlers.set('CreateTask', () => ({ id: taskIds[0], number: 1 }));
    const body = { projectId: ids.project, listId: ids.section, name: 'alone' };
    expect((await call(h.app, 'POST', '/v1/tasks', { ...key, body })).status).toBe(201);
    expect(h.fake.callsOf('CreateTask')).toHaveLength(1);
    h.fake.handlers.set('CreateTasks', () => {
      throw new RpcFailure(grpc.status.UNAVAILABLE, 'database unavailable, retry later');
    });
    const responses = await Promise.all([1, 2].map(() => call(h.app, 'POST', '/v1/tasks', { ...key, body })));
    expect(responses.map((response) => [response.status, response.json])).toEqual([
      [503, { error: 'service temporarily unavailable' }],
      [503, { error: 'service temporarily unavailable' }],
    ]);
  });

  test('an answer with the wrong number of results is a 500 for each request', async () => {
    h.fake.handlers.set('CreateTasks', () => ({ results: [{ created: { id: taskIds[0], number: 1 } }] }));
    const body = { projectId: ids.project, listId: ids.section, name: 'x' };
    const responses = await Promise.all([1, 2].map(() => call(h.app, 'POST', '/v1/tasks', { ...key, body })));
    expect(responses.map((response) => response.status)).toEqual([500, 500]);
    expect(h.fake.callsOf('CreateTasks')).toHaveLength(1);
  });

  test('concurrent PATCHes share one UpdateTasks call (each with its If-Match and ETag); a description change goes alone', async () => {
    h.fake.handlers.set('UpdateTasks', (request) => ({
      results: (request.items as Array<Item & { change: { id: string; name: string; ifMatch: string[] } }>).map((item) =>
        item.change.ifMatch.length > 0
          ? { error: { code: grpc.status.ABORTED, details: 'the task has changed since it was read' } }
          : { updated: { task: task(item.change.id, item.change.name), entityTag: `"${item.change.name}"` } },
      ),
    }));
    h.fake.handlers.set('UpdateTask', (request) => ({ task: task(String(request.id), 'described'), entityTag: '"d"' }));
    const patch = (id: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      call(h.app, 'PATCH', `/v1/tasks/${id}`, { ...key, headers, body });
    const [renamed, conflicted, described] = await Promise.all([
      patch(taskIds[0]!, { name: 'one' }),
      patch(taskIds[1]!, { name: 'two' }, { 'if-match': '"stale"' }),
      patch(taskIds[2]!, { description: '# notes' }),
    ]);
    expect([renamed.status, renamed.headers.etag, renamed.json]).toMatchObject([200, '"one"', { id: taskIds[0], name: 'one' }]);
    expect([conflicted.status, conflicted.json]).toEqual([412, { error: 'the task has changed since it was read' }]);
    expect([described.status, described.headers.etag]).toEqual([200, '"d"']);
    const batches = h.fake.callsOf('UpdateTasks') as Array<{ items: Array<Item & { change: { id: string; ifMatch: string[] } }> }>;
    expect(batches.map((batch) => batch.items.map((item) => [item.change.id, item.change.ifMatch]))).toEqual([
      [
        [taskIds[0], []],
        [taskIds[1], ['"stale"']],
      ],
    ]);
    expect(h.fake.callsOf('UpdateTask').map((request) => request.id)).toEqual([taskIds[2]]);
  });
});

describe('PATCH /v1/tasks/:id answers the JSON the write rendered', () => {
  test('task_json is sent as is (the bytes its ETag hashes); without it (an older tasks replica) the task is rendered from `task`', async () => {
    // Spacing and key order toTask would never produce: proof the bytes are passed through untouched.
    const rendered = `{"name": "as written",  "id": "${taskIds[0]}"}`;
    h.fake.handlers.set('UpdateTask', () => ({ task: task(taskIds[0]!, 'from the message'), entityTag: '"w"', taskJson: Buffer.from(rendered) }));
    const written = await call(h.app, 'PATCH', `/v1/tasks/${taskIds[0]}`, { ...key, body: { name: 'as written' } });
    expect([written.status, written.headers.etag, written.headers['content-type']]).toEqual([200, '"w"', 'application/json; charset=utf-8']);
    expect(written.text).toBe(rendered);

    h.fake.handlers.set('UpdateTask', () => ({ task: task(taskIds[0]!, 'from the message'), entityTag: '"m"' }));
    const older = await call(h.app, 'PATCH', `/v1/tasks/${taskIds[0]}`, { ...key, body: { name: 'from the message' } });
    expect([older.status, older.headers.etag]).toEqual([200, '"m"']);
    expect(older.json).toMatchObject({ id: taskIds[0], name: 'from the message', listId: ids.section, isCompleted: false });
  });
});

describe('coalesced task writes against a tasks service without them (a rolling upgrade)', () => {
  test('UNIMPLEMENTED: each request is sent alone (CreateTask) and answered as before', async () => {
    h.fake.handlers.delete('CreateTasks');
    h.fake.handlers.set('CreateTask', (request) => (request.name === 'bad' ? Promise.reject(new RpcFailure(grpc.status.NOT_FOUND, 'project not found')) : { id: taskIds[0], number: 3 }));
    const post = (name: string) => call(h.app, 'POST', '/v1/tasks', { ...key, body: { projectId: ids.project, listId: ids.section, name } });
    const responses = await Promise.all([post('good'), post('bad')]);
    expect(responses.map((response) => [response.status, response.json])).toEqual([
      [201, { id: taskIds[0], number: 3 }],
      [404, { error: 'project not found' }],
    ]);
    expect(h.fake.callsOf('CreateTasks')).toHaveLength(1);
    expect(h.fake.callsOf('CreateTask').map((request) => request.name)).toEqual(['good', 'bad']);
  });
});
