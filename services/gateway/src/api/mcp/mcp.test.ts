import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { call, fakeCredentials, ids, signToken, startGateway, validApiKey, type CallOptions, type Harness } from '../../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startGateway({ APP_PUBLIC_URL: 'https://app.example.test', OAUTH_AUTHORIZATION_SERVER_URL: 'https://app.example.test' });
  fakeCredentials(h.fake);
  h.fake.handlers.set('GetWorkspace', () => ({
    workspace: { id: ids.workspace, name: 'Acme', urlId: 'acme', taskPrefix: 'AC', plan: 'PLAN_PRO' },
  }));
});
afterAll(async () => h.close());
beforeEach(() => {
  h.fake.calls.length = 0;
});

const mcpHeaders = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
let nextId = 1;

async function rpc(method: string, params: Record<string, unknown>, options: CallOptions = { apiKey: validApiKey }) {
  const response = await call(h.app, 'POST', '/mcp', {
    ...options,
    headers: { ...mcpHeaders, ...options.headers },
    body: { jsonrpc: '2.0', id: nextId++, method, params },
  });
  return response;
}

const resultOf = (response: { json: unknown }) => (response.json as { result: Record<string, unknown> }).result;
const toolNames = (response: { json: unknown }) => (resultOf(response).tools as Array<{ name: string }>).map((tool) => tool.name);

describe('discovery and authentication', () => {
  test('no credentials: 401 naming the protected-resource metadata', async () => {
    const response = await rpc('tools/list', {}, {});
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer realm="task-workspace-api", resource_metadata="https://api.example.test/.well-known/oauth-protected-resource"',
    );
    expect(response.json).toEqual({ error: expect.stringContaining('missing credentials') });
  });

  test('the protected-resource metadata (RFC 9728)', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const response = await call(h.app, 'GET', path);
      expect(response.status).toBe(200);
      expect(response.json).toEqual({
        resource: 'https://api.example.test',
        authorization_servers: ['https://app.example.test'],
        scopes_supported: ['read', 'write'],
        bearer_methods_supported: ['header'],
        resource_name: 'Task workspace API',
      });
    }
  });

  test('GET and DELETE are 405 once authenticated (stateless: no stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await call(h.app, method, '/mcp', { apiKey: validApiKey, headers: mcpHeaders });
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('POST');
    }
    expect((await call(h.app, 'GET', '/mcp')).status).toBe(401);
  });
});

describe('tools', () => {
  test('an API key lists every tool, without a workspaceId argument', async () => {
    const response = await rpc('tools/list', {});
    expect(response.status).toBe(200);
    expect(toolNames(response)).toEqual([
      'get_workspace',
      'list_members',
      'list_statuses',
      'list_projects',
      'list_sections',
      'list_tasks',
      'get_task',
      'find_tasks',
      'create_task',
      'update_task',
      'delete_task',
      'add_comment',
    ]);
    const tools = resultOf(response).tools as Array<{ name: string; inputSchema: { properties: Record<string, unknown>; required?: string[] } }>;
    const create = tools.find((tool) => tool.name === 'create_task')!;
    expect(create.inputSchema.required).toEqual(['projectId', 'listId', 'name']);
    expect(create.inputSchema.properties).not.toHaveProperty('workspaceId');
  });

  test('a read token lists only the read tools, each needing workspaceId, and a write tool is refused', async () => {
    const token = await signToken(h.key, { sub: ids.user, scope: 'read' });
    const listed = await rpc('tools/list', {}, { bearer: token });
    expect(toolNames(listed)).toEqual(['get_workspace', 'list_members', 'list_statuses', 'list_projects', 'list_sections', 'list_tasks', 'get_task', 'find_tasks']);
    const tools = resultOf(listed).tools as Array<{ inputSchema: { required?: string[] } }>;
    for (const tool of tools) expect(tool.inputSchema.required).toContain('workspaceId');

    const refused = resultOf(await rpc('tools/call', { name: 'create_task', arguments: { workspaceId: ids.workspace } }, { bearer: token }));
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('needs the \\"write\\" scope');
    expect(h.fake.callsOf('CreateTask')).toEqual([]);
  });

  test('a tool call is the REST call with the caller credential', async () => {
    const response = resultOf(await rpc('tools/call', { name: 'get_workspace', arguments: {} }));
    expect(response.isError).toBeUndefined();
    expect(response.structuredContent).toEqual({ id: ids.workspace, name: 'Acme', urlId: 'acme', avatarUrl: null, taskPrefix: 'AC' });

    const token = await signToken(h.key, { sub: ids.user, scope: 'read' });
    const asPerson = resultOf(await rpc('tools/call', { name: 'get_workspace', arguments: { workspaceId: ids.workspace } }, { bearer: token }));
    expect(asPerson.structuredContent).toMatchObject({ id: ids.workspace });
    const elsewhere = resultOf(await rpc('tools/call', { name: 'get_workspace', arguments: { workspaceId: ids.task } }, { bearer: token }));
    expect(elsewhere).toMatchObject({ isError: true, structuredContent: { status: 403, error: 'not a member of this workspace (403)' } });
    for (const [workspaceId, error] of [
      ['a\r\nx-api-key: stolen', 'not a member of this workspace (403)'],
      ['w'.repeat(10_000), 'not a member of this workspace (403)'],
      ['', expect.stringMatching(/^workspaceId: required/)],
      [42, expect.stringMatching(/^workspaceId: required/)],
    ] as const) {
      const hostile = resultOf(await rpc('tools/call', { name: 'get_workspace', arguments: { workspaceId } }, { bearer: token }));
      expect(hostile).toMatchObject({ isError: true, structuredContent: { error } });
    }
  });

  test('REST validation answers for the tool; unknown tools and arguments are tool errors', async () => {
    const invalid = resultOf(await rpc('tools/call', { name: 'create_task', arguments: { projectId: 'x', listId: ids.section, name: '' } }));
    expect(invalid).toMatchObject({ isError: true, structuredContent: { status: 400 } });
    expect(String((invalid.structuredContent as { error: string }).error)).toContain('body.projectId: must be a valid id (UUID)');
    const unknown = resultOf(await rpc('tools/call', { name: 'x'.repeat(5000), arguments: {} }));
    expect(unknown).toMatchObject({ isError: true });
    expect(JSON.stringify(unknown).length).toBeLessThan(1000);
    const typo = resultOf(await rpc('tools/call', { name: 'get_workspace', arguments: { workspaceID: 'x' } }));
    expect(typo).toMatchObject({ isError: true, structuredContent: { error: 'unknown argument: workspaceID' } });
  });

  test('a batch over 20 messages is refused before any work', async () => {
    const batch = Array.from({ length: 21 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' }));
    const response = await call(h.app, 'POST', '/mcp', { apiKey: validApiKey, headers: mcpHeaders, body: batch });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ error: 'body: must have at most 20 items' });
  });
});

describe('task resources', () => {
  test('the template is under the app URL; a URL of another origin is refused', async () => {
    const templates = resultOf(await rpc('resources/templates/list', {}));
    expect(templates.resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'https://app.example.test/{urlId}/task/{taskRef}' })]);
    const response = await rpc('resources/read', { uri: 'https://evil.example/acme/task/AC-1' });
    expect(response.json).toMatchObject({ error: { code: -32602 } });
  });

  test('another workspace urlId is not found', async () => {
    const response = await rpc('resources/read', { uri: 'https://app.example.test/other/task/AC-1' });
    expect(response.json).toMatchObject({ error: { code: -32002, message: 'MCP error -32002: task not found (404)' } });
  });
});

describe('the REST rate limit applies to tool calls', () => {
  let limited: Harness;
  beforeAll(async () => {
    limited = await startGateway({ RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '3' });
    fakeCredentials(limited.fake);
    limited.fake.handlers.set('ListProjects', () => ({ projects: [] }));
  });
  afterAll(async () => limited.close());

  test('the /mcp request and each REST call inside take a token of the credential bucket', async () => {
    const send = () =>
      call(limited.app, 'POST', '/mcp', {
        apiKey: validApiKey,
        headers: mcpHeaders,
        body: { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'list_projects', arguments: {} } },
      });
    expect(resultOf(await send())).toMatchObject({ structuredContent: { items: [] } });
    expect(resultOf(await send())).toMatchObject({
      isError: true,
      structuredContent: { status: 429, error: expect.stringMatching(/^rate limit exceeded \(429\): retry after \d+ seconds$/) },
    });
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
  });
});
