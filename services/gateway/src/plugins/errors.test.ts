import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, fakeCredentials, ids, RpcFailure, startGateway, validApiKey, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startGateway({ BODY_LIMIT_BYTES: '2048', AUTH_FAILURES_PER_MINUTE: '0' });
  fakeCredentials(h.fake);
  h.fake.handlers.set('CreateProject', () => ({ id: ids.project, defaultListId: ids.section }));
  h.fake.handlers.set('DeleteTask', () => ({}));
  h.fake.handlers.set('DeleteComment', () => ({}));
});
afterAll(async () => h.close());

const key = { apiKey: validApiKey };

/** Every error is exactly {"error": string}, as JSON. */
function expectError(response: { status: number; json: unknown; headers: Record<string, unknown> }, status: number, message?: string | RegExp) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(response.json as object)).toEqual(['error']);
  const text = (response.json as { error: unknown }).error;
  expect(typeof text).toBe('string');
  if (typeof message === 'string') expect(text).toBe(message);
  else if (message) expect(text).toMatch(message);
}

describe('framework errors', () => {
  test('unknown route → 404', async () => {
    expectError(await call(h.app, 'GET', '/v1/nothing-here', key), 404, 'route GET /v1/nothing-here not found');
    expectError(await call(h.app, 'PUT', '/v1/tasks/x', key), 404);
  });

  test('malformed JSON → 400', async () => {
    expectError(await call(h.app, 'POST', '/v1/projects', { ...key, rawBody: '{"name":', headers: { 'content-type': 'application/json' } }), 400, 'request body is not valid JSON');
  });

  test('prototype poisoning → 400', async () => {
    const response = await call(h.app, 'POST', '/v1/projects', { ...key, rawBody: '{"name":"x","__proto__":{"a":1}}', headers: { 'content-type': 'application/json' } });
    expectError(response, 400);
  });

  test('non-JSON body on POST/PATCH → 415', async () => {
    expectError(await call(h.app, 'POST', '/v1/projects', { ...key, rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported content type: send application/json');
    expectError(await call(h.app, 'PATCH', `/v1/tasks/${ids.task}`, { ...key, rawBody: 'x', headers: { 'content-type': 'text/plain' } }), 415);
    expectError(await call(h.app, 'POST', '/v1/projects', { ...key, rawBody: 'x', headers: { 'content-type': '' } }), 415);
  });

  test('JSON with a charset is JSON', async () => {
    const response = await call(h.app, 'POST', '/v1/projects', { ...key, rawBody: '{"name":"P"}', headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(response.status).toBe(201);
  });

  test('body over BODY_LIMIT_BYTES → 413', async () => {
    expectError(await call(h.app, 'POST', '/v1/projects', { ...key, body: { name: 'x'.repeat(4096) } }), 413, 'request body is too large');
  });

  test('empty JSON body on POST → 400 naming the body', async () => {
    expectError(await call(h.app, 'POST', '/v1/projects', { ...key, rawBody: '', headers: { 'content-type': 'application/json' } }), 400, 'body: Required');
    expectError(await call(h.app, 'POST', '/v1/projects', key), 400, 'body: Required');
  });

  test('DELETE with content-type json and an empty body, or with any body, is fine', async () => {
    expect((await call(h.app, 'DELETE', `/v1/tasks/${ids.task}`, { ...key, rawBody: '', headers: { 'content-type': 'application/json' } })).status).toBe(204);
    expect((await call(h.app, 'DELETE', `/v1/tasks/${ids.task}`, { ...key, rawBody: '{"a":1}', headers: { 'content-type': 'application/json' } })).status).toBe(204);
    expect((await call(h.app, 'DELETE', `/v1/comments/${ids.comment}`, { ...key, rawBody: 'junk', headers: { 'content-type': 'text/plain' } })).status).toBe(204);
  });

  test('GET with a body is fine', async () => {
    h.fake.handlers.set('ListProjects', () => ({ projects: [] }));
    const response = await call(h.app, 'GET', '/v1/projects', { ...key, rawBody: '{}', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(200);
    expect(response.json).toEqual([]);
  });
});

describe('errors raised before routing', () => {
  const token = 'download-token-never-echoed';
  test.each([
    ['a path parameter over 100 characters → 414', `/v1/tasks/${'a'.repeat(101)}`, 414, 'URL path segment is too long'],
    ['the same on the download route → 414', `/v1/attachments/${'a'.repeat(101)}/content?token=${token}`, 414, 'URL path segment is too long'],
    ['a bad percent-encoding → 400', `/v1/attachments/%zz/content?token=${token}`, 400, 'malformed URL: invalid percent-encoding'],
  ])('%s, exactly {"error"}, nothing echoed', async (_label, url, status, message) => {
    for (const options of [key, {}]) {
      const response = await call(h.app, 'GET', url, options);
      expectError(response, status, message);
      expect(response.text).not.toContain(token);
      expect(response.text).not.toContain('aaaa');
    }
  });
});

describe('validation messages name the field', () => {
  test.each([
    [{}, 'body.name: Required'],
    [{ name: 5 }, 'body.name: expected string, got number'],
    [{ name: '   ' }, 'body.name: must not be empty'],
    [{ name: 'x'.repeat(256) }, 'body.name: must be at most 255 characters'],
    [{ name: 'P', color: 'red' }, 'body.color: unknown field'],
    [{ name: 'P', description: null }, 'body.description: expected string, got null'],
    [[], 'body: expected object, got array'],
  ])('POST /v1/projects %j → %s', async (body, message) => {
    expectError(await call(h.app, 'POST', '/v1/projects', { ...key, body }), 400, message);
  });

  test.each([
    [{}, 'body: at least one field is required'],
    [{ assigneeId: 'bob' }, 'body.assigneeId: must be a valid id (UUID)'],
    [{ isCompleted: 'yes' }, 'body.isCompleted: expected boolean, got string'],
    [{ description: 42 }, 'body.description: has an invalid type'],
    [{ description: 'x'.repeat(100_001) }, /^body\.description: must be at most 100000 characters|request body is too large/],
    [{ description: [{ children: [] }] }, 'body.description.0.type: Required'],
    [{ statusId: null }, 'body.statusId: expected string, got null'],
  ])('PATCH /v1/tasks/:id %j → 400', async (body, message) => {
    const response = await call(h.app, 'PATCH', `/v1/tasks/${ids.task}`, { ...key, body });
    expect([400, 413]).toContain(response.status);
    expectError(response, response.status, message);
  });

  test('several problems are reported together', async () => {
    const response = await call(h.app, 'POST', '/v1/tasks', { ...key, body: { name: '', listId: 'x' } });
    expectError(response, 400, 'body.projectId: Required; body.listId: must be a valid id (UUID); body.name: must not be empty');
  });
});

describe('backend failures', () => {
  test.each([
    [grpc.status.INVALID_ARGUMENT, 400, 'listId does not belong to the project'],
    [grpc.status.NOT_FOUND, 404, 'task not found'],
    [grpc.status.PERMISSION_DENIED, 403, 'the free plan allows 300 tasks'],
    [grpc.status.UNAUTHENTICATED, 401, 'nope'],
    [grpc.status.FAILED_PRECONDITION, 400, 'precondition'],
  ])('gRPC %i → HTTP %i with the message', async (code, status, message) => {
    h.fake.handlers.set('GetTasks', () => {
      throw new RpcFailure(code, message);
    });
    expectError(await call(h.app, 'GET', `/v1/tasks/${ids.task}`, key), status, message);
  });

  test('internal errors are hidden', async () => {
    h.fake.handlers.set('GetTasks', () => {
      throw new RpcFailure(grpc.status.INTERNAL, 'relation "tasks" does not exist');
    });
    expectError(await call(h.app, 'GET', `/v1/tasks/${ids.task}`, key), 500, 'internal server error');
  });

  test('unavailable → 503', async () => {
    h.fake.handlers.set('GetTasks', () => {
      throw new RpcFailure(grpc.status.UNAVAILABLE, 'connection refused');
    });
    expectError(await call(h.app, 'GET', `/v1/tasks/${ids.task}`, key), 503, 'service temporarily unavailable');
  });

  test('a response that breaks its schema is a 500, never a leak', async () => {
    h.fake.handlers.set('ListMembers', () => ({ members: [{ userId: ids.user, name: 'A', email: 'a@x', role: 'ROLE_UNSPECIFIED' }] }));
    expectError(await call(h.app, 'GET', '/v1/members', key), 500, 'internal server error');
  });
});
