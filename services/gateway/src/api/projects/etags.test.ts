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

const key = { apiKey: validApiKey };
const project = { id: ids.project, name: 'P', description: 'D', taskPrefix: 'P', entityTag: '"p3"' };
const section = { id: ids.section, name: 'To Do', order: 0, projectId: ids.project, entityTag: '"s2"' };
const projectBody = { id: ids.project, name: 'P', description: 'D', taskPrefix: 'P' };
const sectionBody = { id: ids.section, name: 'To Do', order: 0, projectId: ids.project };

describe('ETags of projects and sections at the gateway', () => {
  test('lists: the ETag is the hash of the bytes sent (no entity tag in the body); If-None-Match naming it is a 304', async () => {
    h.fake.handlers.set('ListProjects', () => ({ projects: [project] }));
    h.fake.handlers.set('ListSections', () => ({ sections: [section] }));
    for (const url of ['/v1/projects', `/v1/projects/${ids.project}/sections`]) {
      const first = await call(h.app, 'GET', url, key);
      expect(first.status).toBe(200);
      expect(first.json).toEqual([url === '/v1/projects' ? projectBody : sectionBody]);
      expect(first.headers.etag).toBe(entityTagOf(Buffer.from(first.text)));
      const again = await call(h.app, 'GET', url, { ...key, headers: { 'if-none-match': `W/${String(first.headers.etag)}` } });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      const stale = await call(h.app, 'GET', url, { ...key, headers: { 'if-none-match': '"other"' } });
      expect(stale.status).toBe(200);
    }
  });

  test("GET one: the list item shape with the tasks service's entity tag; 304 when it is current; NOT_FOUND is a 404", async () => {
    h.fake.handlers.set('GetProject', () => ({ project }));
    h.fake.handlers.set('GetSection', () => ({ section }));
    const one = await call(h.app, 'GET', `/v1/projects/${ids.project}`, key);
    expect([one.status, one.json, one.headers.etag]).toEqual([200, projectBody, '"p3"']);
    const same = await call(h.app, 'GET', `/v1/sections/${ids.section}`, { ...key, headers: { 'if-none-match': '"s2"' } });
    expect([same.status, same.text, same.headers.etag]).toEqual([304, '', '"s2"']);
    expect(h.fake.callsOf('GetSection').map((request) => request.id)).toEqual([ids.section]);
    h.fake.handlers.set('GetProject', () => {
      throw new RpcFailure(grpc.status.NOT_FOUND, 'project not found');
    });
    const missing = await call(h.app, 'GET', `/v1/projects/${ids.project}`, key);
    expect([missing.status, missing.json]).toEqual([404, { error: 'project not found' }]);
    const malformed = await call(h.app, 'GET', '/v1/sections/123', key);
    expect(malformed.status).toBe(404);
    expect(h.fake.callsOf('GetSection')).toHaveLength(1);
  });

  test('PATCH: If-Match strong tags go to the tasks service, the answer carries the new ETag; ABORTED is a 412', async () => {
    h.fake.handlers.set('UpdateProject', (request) => ({ id: request.id, entityTag: '"p4"' }));
    h.fake.handlers.set('UpdateSection', (request) => ({ section: { ...section, name: request.name, entityTag: '"s3"' } }));
    const patched = await call(h.app, 'PATCH', `/v1/projects/${ids.project}`, { ...key, body: { name: 'N' }, headers: { 'if-match': '"p3", W/"p2"' } });
    expect([patched.status, patched.json, patched.headers.etag]).toEqual([200, { id: ids.project }, '"p4"']);
    const renamed = await call(h.app, 'PATCH', `/v1/sections/${ids.section}`, { ...key, body: { name: 'N' }, headers: { 'if-match': '*' } });
    expect([renamed.status, renamed.json, renamed.headers.etag]).toEqual([200, { ...sectionBody, name: 'N' }, '"s3"']);
    expect(h.fake.callsOf('UpdateProject').map((request) => request.ifMatch)).toEqual([['"p3"']]);
    expect(h.fake.callsOf('UpdateSection').map((request) => request.ifMatch)).toEqual([[]]);

    h.fake.handlers.set('UpdateSection', () => {
      throw new RpcFailure(grpc.status.ABORTED, 'the section changed since the If-Match entity tag was read; GET it again');
    });
    const stale = await call(h.app, 'PATCH', `/v1/sections/${ids.section}`, { ...key, body: { name: 'N' }, headers: { 'if-match': '"s2"' } });
    expect([stale.status, stale.json]).toEqual([412, { error: 'the section changed since the If-Match entity tag was read; GET it again' }]);
    expect(stale.headers.etag).toBeUndefined();
  });

  test('malformed or only-weak If-Match never reaches the tasks service', async () => {
    const bad = await call(h.app, 'PATCH', `/v1/projects/${ids.project}`, { ...key, body: { name: 'a' }, headers: { 'if-match': 'p3' } });
    expect(bad.status).toBe(400);
    const weak = await call(h.app, 'PATCH', `/v1/sections/${ids.section}`, { ...key, body: { name: 'a' }, headers: { 'if-match': 'W/"s2"' } });
    expect(weak.status).toBe(412);
    expect([...h.fake.callsOf('UpdateProject'), ...h.fake.callsOf('UpdateSection')]).toEqual([]);
  });

  test('PATCH /v1/tasks/:id answers with the ETag UpdateTask gives', async () => {
    const task = { id: ids.task, number: 7, name: 'n', isCompleted: false, listId: ids.section, order: 0, createdAt: '2026-11-22T09:30:00.000Z', projectId: ids.project, labels: [] };
    h.fake.handlers.set('UpdateTask', () => ({ task, entityTag: '"abc"' }));
    const patched = await call(h.app, 'PATCH', `/v1/tasks/${ids.task}`, { ...key, body: { name: 'a' } });
    expect([patched.status, patched.headers.etag]).toEqual([200, '"abc"']);
  });
});
