import { rateLimitHeaders } from '../domain/rate-limit/headers.js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startGateway, type Harness } from '../testing/harness.js';

let h: Harness;
let spec: {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown>; operationId?: string }>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
  security: unknown;
};
beforeAll(async () => {
  h = await startGateway();
  spec = (await h.app.inject({ url: '/openapi.json' })).json();
});
afterAll(async () => h.close());

const expectedOperations = [
  'get /v1/workspace',
  'get /v1/members',
  'get /v1/statuses',
  'get /v1/usage',
  'get /v1/projects',
  'post /v1/projects',
  'get /v1/projects/{id}',
  'patch /v1/projects/{id}',
  'get /v1/projects/{projectId}/sections',
  'post /v1/sections',
  'get /v1/sections/{id}',
  'patch /v1/sections/{id}',
  'get /v1/projects/{projectId}/tasks',
  'get /v1/tasks/{id}',
  'post /v1/tasks',
  'patch /v1/tasks/{id}',
  'delete /v1/tasks/{id}',
  'get /v1/tasks/{id}/comments',
  'post /v1/tasks/{id}/comments',
  'delete /v1/comments/{id}',
  'post /v1/attachments/upload',
  'post /v1/tasks/{id}/attachments',
  'get /v1/tasks/{id}/attachments',
  'get /v1/attachments/{id}/content',
  'get /v1/audit',
  'post /v1/webhooks',
  'get /v1/webhooks',
  'delete /v1/webhooks/{id}',
  'get /v1/webhooks/{id}/deliveries',
  'post /v1/webhooks/{id}/deliveries/{deliveryId}/redeliver',
  'patch /v1/webhooks/{id}',
  'post /v1/webhooks/{id}/rotate-secret',
  'post /v1/webhooks/{id}/test',
];

test('OpenAPI 3.1 with every /v1 operation and nothing else', () => {
  expect(spec.openapi).toBe('3.1.0');
  const operations = Object.entries(spec.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`));
  expect(operations.sort()).toEqual([...expectedOperations].sort());
});

test('security: API key, or Bearer + X-Workspace-Id', () => {
  expect(Object.keys(spec.components.securitySchemes).sort()).toEqual(['apiKey', 'bearer', 'workspaceId']);
  expect(spec.security).toEqual([{ apiKey: [] }, { bearer: [], workspaceId: [] }]);
});

test('every operation documents its success and the error responses', () => {
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const codes = Object.keys(operation.responses);
      if (path === '/v1/attachments/{id}/content') {
        // The capability URL needs no credentials: it redirects or is not found (or the router refuses the URL).
        expect(codes.sort(), `${method} ${path}`).toEqual(['302', '400', '404', '414', '429']);
        continue;
      }
      expect(codes, `${method} ${path}`).toEqual(expect.arrayContaining(['401', '403', '429']));
      expect(codes.some((code) => code.startsWith('2')), `${method} ${path}`).toBe(true);
      if (method === 'post' || method === 'patch') expect(codes).toContain('400');
      if (path.includes('{')) expect(codes).toEqual(expect.arrayContaining(['400', '404', '414']));
      expect(operation.responses['401']).toMatchObject({ content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });
    }
  }
  expect(Object.keys(spec.paths['/v1/tasks']?.post?.responses ?? {})).toContain('201');
  expect(Object.keys(spec.paths['/v1/tasks/{id}']?.delete?.responses ?? {})).toContain('204');
});

test('the Task shapes are documented with explicit nulls', () => {
  expect(spec.components.schemas.Task).toMatchObject({
    required: expect.arrayContaining(['description', 'assigneeId', 'statusId', 'projectId', 'labels']),
  });
  expect(spec.components.schemas.TaskListItem).toMatchObject({ required: expect.arrayContaining(['order']) });
});

test('the label element of a task is documented: {id, name, color}', () => {
  expect(spec.components.schemas.Label).toMatchObject({
    type: 'object',
    required: ['id', 'name', 'color'],
    properties: { id: { type: 'string' }, name: { type: 'string' }, color: { type: 'string', examples: ['#1D4ED8'] } },
    description: expect.stringContaining('task.updated'),
  });
  expect(spec.components.schemas.Task).toMatchObject({ properties: { labels: { type: 'array', items: { $ref: '#/components/schemas/Label' } } } });
});

test('Swagger UI is served at /docs', async () => {
  const page = await h.app.inject({ url: '/docs/' });
  expect(page.statusCode).toBe(200);
  expect(page.headers['content-type']).toMatch(/text\/html/);
});

test('every operation takes an optional X-Request-Id and every documented answer carries one', () => {
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item) as Array<[string, { parameters?: Array<{ in: string; name: string; required?: boolean }>; responses: Record<string, { headers?: Record<string, { required?: boolean }> }> }]>) {
      expect(operation.parameters, `${method} ${path}`).toContainEqual(expect.objectContaining({ in: 'header', name: 'X-Request-Id', required: false }));
      for (const [code, response] of Object.entries(operation.responses)) {
        expect(response.headers?.['X-Request-Id']?.required, `${method} ${path} ${code}`).toBe(true);
      }
    }
  }
  expect(spec.paths['/v1/workspace']?.get?.responses['429']).toMatchObject({ headers: { 'Retry-After': expect.anything() } });
});

test('every documented answer may carry RateLimit-Policy and RateLimit, whose patterns match what the gateway sends', () => {
  const sent = rateLimitHeaders({ quota: 200, windowSeconds: 4 }, { allowed: true, remaining: 199, resetSeconds: 1, retryAfterSeconds: 0 });
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item) as Array<[string, { responses: Record<string, { headers?: Record<string, { required?: boolean; schema?: { pattern?: string } }> }> }]>) {
      for (const [code, response] of Object.entries(operation.responses)) {
        const policy = response.headers?.['RateLimit-Policy'];
        const state = response.headers?.['RateLimit'];
        expect(policy?.required, `${method} ${path} ${code}`).toBeUndefined();
        expect(sent['ratelimit-policy']).toMatch(new RegExp(policy?.schema?.pattern ?? '^$'));
        expect(sent.ratelimit).toMatch(new RegExp(state?.schema?.pattern ?? '^$'));
      }
    }
  }
});

test('the task list documents its optional paging and filter parameters, the Link header and updatedAt', () => {
  const list = spec.paths['/v1/projects/{projectId}/tasks']?.get as
    | { parameters: Array<{ in: string; name: string; required?: boolean }>; responses: Record<string, { headers?: Record<string, { required?: boolean }> }> }
    | undefined;
  const query = (list?.parameters ?? []).filter((parameter) => parameter.in === 'query');
  expect(query.map((parameter) => parameter.name).sort()).toEqual(['assigneeId', 'cursor', 'isCompleted', 'limit', 'listId', 'statusId', 'updatedSince']);
  for (const parameter of query) expect(parameter.required ?? false, parameter.name).toBe(false);
  expect(list?.responses['200']?.headers?.['Link']).toMatchObject({ required: false });
  const schemas = (spec as unknown as { components: { schemas: Record<string, { required?: string[] }> } }).components.schemas;
  expect(schemas['TaskListItem']?.required).toContain('updatedAt');
  expect(schemas['Task']?.required).toContain('updatedAt');
});
