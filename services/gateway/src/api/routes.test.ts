import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { call, fakeCredentials, ids, RpcFailure, signToken, startGateway, validApiKey, type Harness } from '../testing/harness.js';

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
const ws = ids.workspace;
const createdAt = '2026-11-22T09:30:00.000Z';
const nodes = [{ type: 'paragraph', children: [{ type: 'text', text: 'Hello', bold: true }] }];

/** A task as the tasks service sends it (proto3 optional fields absent when null). */
const protoTask = (overrides: Record<string, unknown> = {}) => ({
  id: ids.task,
  number: 7,
  name: 'Write docs',
  isCompleted: false,
  listId: ids.section,
  order: 3,
  createdAt,
  projectId: ids.project,
  labels: [{ id: ids.status, name: 'bug', color: '#FF0000' }],
  ...overrides,
});

describe('workspace, members, statuses', () => {
  test('GET /v1/workspace: null avatarUrl, no plan', async () => {
    h.fake.handlers.set('GetWorkspace', () => ({ workspace: { id: ws, name: 'Acme', urlId: 'acme', taskPrefix: 'AC', plan: 'PLAN_PRO' } }));
    const response = await call(h.app, 'GET', '/v1/workspace', key);
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ id: ws, name: 'Acme', urlId: 'acme', avatarUrl: null, taskPrefix: 'AC' });
  });

  test('GET /v1/members: lowercase roles, avatarUrl null or string', async () => {
    h.fake.handlers.set('ListMembers', () => ({
      members: [
        { userId: ids.user, name: 'Ada', email: 'ada@example.com', role: 'ROLE_OWNER' },
        { userId: ids.apiKey, name: 'Bob', email: 'bob@example.com', role: 'ROLE_GUEST', avatarUrl: 'https://img/b.png' },
      ],
    }));
    const response = await call(h.app, 'GET', '/v1/members', key);
    expect(response.json).toEqual([
      { userId: ids.user, name: 'Ada', email: 'ada@example.com', role: 'owner', avatarUrl: null },
      { userId: ids.apiKey, name: 'Bob', email: 'bob@example.com', role: 'guest', avatarUrl: 'https://img/b.png' },
    ]);
  });

  test('GET /v1/statuses: systemType null for custom statuses', async () => {
    h.fake.handlers.set('ListStatuses', () => ({
      statuses: [
        { id: ids.status, name: 'To do', color: '#AAAAAA', systemType: 'todo', order: 0 },
        { id: ids.task, name: 'Review', color: '#BBBBBB', order: 1 },
      ],
    }));
    const response = await call(h.app, 'GET', '/v1/statuses', key);
    expect(response.json).toEqual([
      { id: ids.status, name: 'To do', color: '#AAAAAA', systemType: 'todo', order: 0 },
      { id: ids.task, name: 'Review', color: '#BBBBBB', systemType: null, order: 1 },
    ]);
  });
});

describe('projects', () => {
  test('GET /v1/projects: description null when absent', async () => {
    h.fake.handlers.set('ListProjects', () => ({
      projects: [
        { id: ids.project, name: 'Web', taskPrefix: 'WEB' },
        { id: ids.section, name: 'App', description: 'Mobile', taskPrefix: 'APP' },
      ],
    }));
    const response = await call(h.app, 'GET', '/v1/projects', key);
    expect(response.json).toEqual([
      { id: ids.project, name: 'Web', description: null, taskPrefix: 'WEB' },
      { id: ids.section, name: 'App', description: 'Mobile', taskPrefix: 'APP' },
    ]);
  });

  test('POST /v1/projects → 201 {id, defaultListId}; text passed verbatim', async () => {
    h.fake.handlers.set('CreateProject', () => ({ id: ids.project, defaultListId: ids.section }));
    const response = await call(h.app, 'POST', '/v1/projects', { ...key, body: { name: ' Web ', description: ' Site\n' } });
    expect(response.status).toBe(201);
    expect(response.json).toEqual({ id: ids.project, defaultListId: ids.section });
    expect(h.fake.callsOf('CreateProject')).toEqual([{ workspaceId: ws, name: ' Web ', description: ' Site\n' }]);
  });

  test('POST /v1/projects without description sends none', async () => {
    h.fake.handlers.set('CreateProject', () => ({ id: ids.project, defaultListId: ids.section }));
    await call(h.app, 'POST', '/v1/projects', { ...key, body: { name: 'Web', description: '' } });
    expect(h.fake.callsOf('CreateProject')).toEqual([{ workspaceId: ws, name: 'Web' }]);
  });

  test('PATCH /v1/projects/:id → {id}; null clears the description', async () => {
    h.fake.handlers.set('UpdateProject', (request) => ({ id: request.id }));
    const response = await call(h.app, 'PATCH', `/v1/projects/${ids.project}`, { ...key, body: { description: null } });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ id: ids.project });
    expect(h.fake.callsOf('UpdateProject')).toEqual([{ workspaceId: ws, id: ids.project, clearDescription: true, ifMatch: [] }]);
    await call(h.app, 'PATCH', `/v1/projects/${ids.project}`, { ...key, body: { name: 'New', description: 'D' } });
    expect(h.fake.callsOf('UpdateProject')[1]).toEqual({ workspaceId: ws, id: ids.project, name: 'New', description: 'D', clearDescription: false, ifMatch: [] });
  });

  test('a path id that is not a UUID is not found, without a backend call', async () => {
    const response = await call(h.app, 'PATCH', '/v1/projects/123', { ...key, body: { name: 'x' } });
    expect(response.status).toBe(404);
    expect(response.json).toEqual({ error: 'project not found' });
    expect(h.fake.callsOf('UpdateProject')).toHaveLength(0);
  });
});

describe('sections', () => {
  const section = { id: ids.section, name: 'To Do', order: 0, projectId: ids.project };

  test('GET /v1/projects/:projectId/sections', async () => {
    h.fake.handlers.set('ListSections', () => ({ sections: [section] }));
    const response = await call(h.app, 'GET', `/v1/projects/${ids.project}/sections`, key);
    expect(response.json).toEqual([section]);
    expect(h.fake.callsOf('ListSections')).toEqual([{ workspaceId: ws, projectId: ids.project }]);
    expect((await call(h.app, 'GET', '/v1/projects/nope/sections', key)).status).toBe(404);
  });

  test('POST /v1/sections → 201 {id}; body ids must be UUIDs', async () => {
    h.fake.handlers.set('CreateSection', () => ({ id: ids.section }));
    const response = await call(h.app, 'POST', '/v1/sections', { ...key, body: { projectId: ids.project, name: 'Doing' } });
    expect(response.status).toBe(201);
    expect(response.json).toEqual({ id: ids.section });
    const bad = await call(h.app, 'POST', '/v1/sections', { ...key, body: { projectId: 'p1', name: 'Doing' } });
    expect(bad.status).toBe(400);
  });

  test('PATCH /v1/sections/:id → the Section', async () => {
    h.fake.handlers.set('UpdateSection', (request) => ({ section: { ...section, name: request.name } }));
    const response = await call(h.app, 'PATCH', `/v1/sections/${ids.section}`, { ...key, body: { name: 'Backlog' } });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ ...section, name: 'Backlog' });
    expect((await call(h.app, 'PATCH', `/v1/sections/${ids.section}`, { ...key, body: {} })).json).toEqual({ error: 'body.name: Required' });
  });
});

describe('tasks', () => {
  test('GET /v1/projects/:projectId/tasks: serves the JSON the tasks service rendered, byte for byte', async () => {
    const rendered = `[{"id":"${ids.task}","name":"Tâche 🧪","description":null}]`;
    h.fake.handlers.set('ListTasks', () => ({ tasksJson: Buffer.from(rendered) }));
    const response = await call(h.app, 'GET', `/v1/projects/${ids.project}/tasks`, key);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.text).toBe(rendered);
    expect(h.fake.callsOf('ListTasks')).toEqual([{ workspaceId: ws, projectId: ids.project, knownVersion: '0' }]);
  });

  test('GET /v1/projects/:projectId/tasks: keeps the rendered list and serves it while ListTasks answers "not modified"', async () => {
    const project = '00000000-0000-4000-8000-00000000feed';
    let current = { version: '5', json: '[{"id":"a"}]' };
    h.fake.handlers.set('ListTasks', (request) =>
      request.knownVersion === current.version
        ? { version: current.version, notModified: true }
        : { version: current.version, notModified: false, tasksJson: Buffer.from(current.json) },
    );
    const url = `/v1/projects/${project}/tasks`;
    expect((await call(h.app, 'GET', url, key)).text).toBe('[{"id":"a"}]');
    expect((await call(h.app, 'GET', url, key)).text).toBe('[{"id":"a"}]');
    current = { version: '6', json: '[{"id":"a"},{"id":"b"}]' };
    expect((await call(h.app, 'GET', url, key)).text).toBe('[{"id":"a"},{"id":"b"}]');
    expect((await call(h.app, 'GET', url, key)).text).toBe('[{"id":"a"},{"id":"b"}]');
    const asked = h.fake.callsOf('ListTasks').filter((request) => request.projectId === project).map((request) => request.knownVersion);
    expect(asked).toEqual(['0', '5', '5', '6']);
  });

  test('GET /v1/projects/:projectId/tasks: "not modified" for a version the gateway does not hold is a 500 {"error"}', async () => {
    h.fake.handlers.set('ListTasks', () => ({ version: '9', notModified: true }));
    const response = await call(h.app, 'GET', '/v1/projects/00000000-0000-4000-8000-00000000beef/tasks', key);
    expect(response.status).toBe(500);
    expect(response.json).toEqual({ error: 'internal server error' });
  });

  test('GET /v1/projects/:projectId/tasks: a streamed list is sent as its chunks concatenate, tagged with the snapshot version, never cached', async () => {
    const project = '00000000-0000-4000-8000-0000000fa9e5';
    h.fake.handlers.set('ListTasks', () => ({ version: '4', streamed: true }));
    h.fake.handlers.set('StreamTasks', () => [
      { version: '5', jsonChunk: Buffer.from('[{"id":"a"},{"id":"b"}') },
      { jsonChunk: Buffer.from(',{"id":"c"}') },
      { jsonChunk: Buffer.from(',{"id":"d"}]') },
    ]);
    const url = `/v1/projects/${project}/tasks`;
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await call(h.app, 'GET', url, key);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers.etag).toBe('"l5"');
      expect(response.text).toBe('[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"}]');
    }
    // Never cached: the first read asked ListTasks with no version held, the second went to StreamTasks at once; both streamed.
    expect(h.fake.callsOf('ListTasks').filter((request) => request.projectId === project).map((request) => request.knownVersion)).toEqual(['0']);
    expect(h.fake.callsOf('StreamTasks')).toEqual([
      { workspaceId: ws, projectId: project },
      { workspaceId: ws, projectId: project },
    ]);
  });

  test('GET /v1/projects/:projectId/tasks: StreamTasks failing before its first message answers its status', async () => {
    h.fake.handlers.set('ListTasks', () => ({ version: '4', streamed: true }));
    h.fake.handlers.set('StreamTasks', () => {
      throw new RpcFailure(grpc.status.UNAVAILABLE, 'too many task lists are being streamed, retry later');
    });
    const response = await call(h.app, 'GET', '/v1/projects/00000000-0000-4000-8000-0000000fa9e6/tasks', key);
    expect(response.status).toBe(503);
    expect(response.json).toEqual({ error: 'service temporarily unavailable' });
  });

  test('a RESOURCE_EXHAUSTED from a backend is a 500 without its internal message, not a 429', async () => {
    h.fake.handlers.set('ListTasks', () => {
      throw new RpcFailure(grpc.status.RESOURCE_EXHAUSTED, 'Received message larger than max (40000000 vs 33554432)');
    });
    const response = await call(h.app, 'GET', '/v1/projects/00000000-0000-4000-8000-00000000b16b/tasks', key);
    expect(response.status).toBe(500);
    expect(response.headers['retry-after']).toBeUndefined();
    expect(response.json).toEqual({ error: 'internal server error' });
  });

  test('GET /v1/tasks/:id: serves the rendered task as is; an empty answer is a 404', async () => {
    const rendered = `{"id":"${ids.task}","labels":[]}`;
    h.fake.handlers.set('GetTasks', () => ({ tasksJson: [Buffer.from(rendered)] }));
    const response = await call(h.app, 'GET', `/v1/tasks/${ids.task}`, key);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.text).toBe(rendered);
    expect(h.fake.callsOf('GetTasks')).toEqual([{ tasks: [{ workspaceId: ws, id: ids.task }] }]);
    h.fake.handlers.set('GetTasks', () => ({ tasksJson: [Buffer.alloc(0)] }));
    expect((await call(h.app, 'GET', `/v1/tasks/${ids.task}`, key)).json).toEqual({ error: 'task not found' });
  });

  test('GET /v1/tasks/:id: concurrent reads share one GetTasks call and each gets its own task', async () => {
    const other = '00000000-0000-4000-8000-00000000abcd';
    h.fake.handlers.set('GetTasks', (request) => ({
      tasksJson: (request.tasks as Array<{ id: string }>).map((ref) => (ref.id === other ? Buffer.alloc(0) : Buffer.from(`{"id":"${ref.id}"}`))),
    }));
    const [first, missing] = await Promise.all([
      call(h.app, 'GET', `/v1/tasks/${ids.task}`, key),
      call(h.app, 'GET', `/v1/tasks/${other}`, key),
    ]);
    expect(first.json).toEqual({ id: ids.task });
    expect(missing.status).toBe(404);
    expect(h.fake.callsOf('GetTasks')).toEqual([{ tasks: [{ workspaceId: ws, id: ids.task }, { workspaceId: ws, id: other }] }]);
  });

  test('GET /v1/tasks/:id: a truncated GetTasks answer (byte bound) is completed by asking for the rest', async () => {
    const others = ['00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-0000000000a2'];
    h.fake.handlers.set('GetTasks', (request) => {
      const asked = request.tasks as Array<{ id: string }>;
      return { tasksJson: asked.slice(0, 1).map((ref) => Buffer.from(`{"id":"${ref.id}"}`)), truncated: asked.length > 1 };
    });
    const responses = await Promise.all([ids.task, ...others].map((id) => call(h.app, 'GET', `/v1/tasks/${id}`, key)));
    expect(responses.map((response) => response.json)).toEqual([{ id: ids.task }, { id: others[0] }, { id: others[1] }]);
    expect(h.fake.callsOf('GetTasks').map((request) => (request.tasks as unknown[]).length)).toEqual([3, 2, 1]);
  });

  test('GET /v1/tasks/:id: a reply with the wrong number of tasks is a 500 {"error"}', async () => {
    h.fake.handlers.set('GetTasks', () => ({ tasksJson: [] }));
    expect((await call(h.app, 'GET', `/v1/tasks/${ids.task}`, key)).json).toEqual({ error: 'internal server error' });
  });

  test('GET /v1/tasks/:id with a non-UUID id → 404', async () => {
    expect((await call(h.app, 'GET', '/v1/tasks/42', key)).json).toEqual({ error: 'task not found' });
  });

  test('POST /v1/tasks → 201 {id, number}', async () => {
    h.fake.handlers.set('CreateTask', () => ({ id: ids.task, number: 8 }));
    const body = { projectId: ids.project, listId: ids.section, name: 'New', assigneeId: ids.user };
    const response = await call(h.app, 'POST', '/v1/tasks', { ...key, body });
    expect(response.status).toBe(201);
    expect(response.json).toEqual({ id: ids.task, number: 8 });
    expect(h.fake.callsOf('CreateTask')).toEqual([{ workspaceId: ws, ...body }]);
    const withDescription = await call(h.app, 'POST', '/v1/tasks', { ...key, body: { ...body, description: 'x' } });
    expect(withDescription.json).toEqual({ error: 'body.description: unknown field' });
  });

  test.each([
    [{ name: 'Renamed' }, { name: 'Renamed' }],
    [{ isCompleted: true }, { isCompleted: true }],
    [{ statusId: ids.status, listId: ids.section }, { statusId: ids.status, listId: ids.section }],
    [{ assigneeId: ids.user }, { assigneeId: ids.user }],
    [{ assigneeId: null }, { clearAssignee: true }],
    [{ description: '# Title' }, { description: { markdown: '# Title' } }],
    [{ description: nodes }, { description: { nodesJson: JSON.stringify(nodes) } }],
    [{ description: null }, { description: { clear: true } }],
    [{ description: '' }, { description: { clear: true } }],
    [{ description: [] }, { description: { clear: true } }],
  ])('PATCH /v1/tasks/:id %j → UpdateTask %j, answers the single task', async (body, expected) => {
    h.fake.handlers.set('UpdateTask', () => ({ task: protoTask({ isCompleted: true }) }));
    const response = await call(h.app, 'PATCH', `/v1/tasks/${ids.task}`, { ...key, body });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ id: ids.task, isCompleted: true, projectId: ids.project });
    expect(response.json).not.toHaveProperty('order');
    const [sent] = h.fake.callsOf('UpdateTask');
    const defaults = { workspaceId: ws, id: ids.task, clearAssignee: false, ifMatch: [], description: null };
    expect(sent).toEqual({ ...defaults, ...expected });
  });

  test('DELETE /v1/tasks/:id → 204 without a body', async () => {
    h.fake.handlers.set('DeleteTask', () => ({}));
    const response = await call(h.app, 'DELETE', `/v1/tasks/${ids.task}`, key);
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(h.fake.callsOf('DeleteTask')).toEqual([{ workspaceId: ws, id: ids.task }]);
  });
});

describe('comments', () => {
  test('POST /v1/tasks/:id/comments with an API key → actor is the key', async () => {
    h.fake.handlers.set('CreateComment', () => ({ id: ids.comment }));
    const response = await call(h.app, 'POST', `/v1/tasks/${ids.task}/comments`, { ...key, body: { text: 'Looks **good**\n\n- a' } });
    expect(response.status).toBe(201);
    expect(response.json).toEqual({ id: ids.comment });
    expect(h.fake.callsOf('CreateComment')).toEqual([
      { workspaceId: ws, taskId: ids.task, text: 'Looks **good**\n\n- a', actor: { apiKeyId: ids.apiKey } },
    ]);
  });

  test('with a Bearer token → actor is the user', async () => {
    h.fake.handlers.set('CreateComment', () => ({ id: ids.comment }));
    const token = await signToken(h.key, { sub: ids.user, scope: 'write' });
    await call(h.app, 'POST', `/v1/tasks/${ids.task}/comments`, { bearer: token, workspaceId: ws, body: { text: 'hi' } });
    expect(h.fake.callsOf('CreateComment')[0]?.actor).toEqual({ userId: ids.user });
  });

  test('blank text → 400', async () => {
    const response = await call(h.app, 'POST', `/v1/tasks/${ids.task}/comments`, { ...key, body: { text: ' \n ' } });
    expect(response.json).toEqual({ error: 'body.text: must not be empty' });
  });

  test('DELETE /v1/comments/:id → 204', async () => {
    h.fake.handlers.set('DeleteComment', () => ({}));
    const response = await call(h.app, 'DELETE', `/v1/comments/${ids.comment}`, key);
    expect(response.status).toBe(204);
    expect((await call(h.app, 'DELETE', '/v1/comments/abc', key)).status).toBe(404);
  });
});
