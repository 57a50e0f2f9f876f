import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { entityTagOf } from '@tws/common';
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

const task = { id: ids.task, number: 7, name: 'n', isCompleted: false, listId: ids.section, order: 0, createdAt: '2026-11-22T09:30:00.000Z', projectId: ids.project, labels: [] };

describe('ETags at the gateway', () => {
  test('GET /v1/tasks/:id: the ETag is the hash of the bytes sent; If-None-Match naming it is a 304 with no body', async () => {
    const rendered = Buffer.from(`{"id":"${ids.task}","labels":[]}`);
    h.fake.handlers.set('GetTasks', () => ({ tasksJson: [rendered] }));
    const first = await call(h.app, 'GET', `/v1/tasks/${ids.task}`, { apiKey: validApiKey });
    expect(first.status).toBe(200);
    expect(first.headers.etag).toBe(entityTagOf(rendered));
    const again = await call(h.app, 'GET', `/v1/tasks/${ids.task}`, { apiKey: validApiKey, headers: { 'if-none-match': `"x", ${entityTagOf(rendered)}` } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.etag).toBe(entityTagOf(rendered));
  });

  test('GET /v1/projects/:projectId/tasks: a current list tag is asked about as known_version and answered 304', async () => {
    h.fake.handlers.set('ListTasks', (request) =>
      String(request.knownVersion) === '9' ? { version: '9', notModified: true, tasksJson: Buffer.alloc(0) } : { version: '9', tasksJson: Buffer.from('[]') },
    );
    const url = `/v1/projects/00000000-0000-4000-8000-0000000e7a90/tasks`;
    const response = await call(h.app, 'GET', url, { apiKey: validApiKey, headers: { 'if-none-match': '"l9"' } });
    expect(response.status).toBe(304);
    expect(response.headers.etag).toBe('"l9"');
    expect(h.fake.callsOf('ListTasks').map((request) => String(request.knownVersion))).toEqual(['9']);
  });

  test('PATCH /v1/tasks/:id: If-Match tags go to UpdateTask; ABORTED is a 412 {"error"}; no If-Match sends none', async () => {
    h.fake.handlers.set('UpdateTask', () => ({ task }));
    await call(h.app, 'PATCH', `/v1/tasks/${ids.task}`, { apiKey: validApiKey, body: { name: 'a' }, headers: { 'if-match': '"t1", W/"t2"' } });
    await call(h.app, 'PATCH', `/v1/tasks/${ids.task}`, { apiKey: validApiKey, body: { name: 'a' }, headers: { 'if-match': '*' } });
    await call(h.app, 'PATCH', `/v1/tasks/${ids.task}`, { apiKey: validApiKey, body: { name: 'a' } });
    expect(h.fake.callsOf('UpdateTask').map((request) => request.ifMatch)).toEqual([['"t1"'], [], []]);

    h.fake.handlers.set('UpdateTask', () => {
      throw new RpcFailure(grpc.status.ABORTED, 'the task changed since the If-Match entity tag was read; GET it again');
    });
    const stale = await call(h.app, 'PATCH', `/v1/tasks/${ids.task}`, { apiKey: validApiKey, body: { name: 'a' }, headers: { 'if-match': '"t1"' } });
    expect(stale.status).toBe(412);
    expect(stale.json).toEqual({ error: 'the task changed since the If-Match entity tag was read; GET it again' });
  });

  test('malformed or only-weak If-Match never reaches the tasks service', async () => {
    const bad = await call(h.app, 'PATCH', `/v1/tasks/${ids.task}`, { apiKey: validApiKey, body: { name: 'a' }, headers: { 'if-match': 'abc' } });
    expect(bad.status).toBe(400);
    const weak = await call(h.app, 'PATCH', `/v1/tasks/${ids.task}`, { apiKey: validApiKey, body: { name: 'a' }, headers: { 'if-match': 'W/"t"' } });
    expect(weak.status).toBe(412);
    expect(h.fake.callsOf('UpdateTask')).toEqual([]);
  });
});
