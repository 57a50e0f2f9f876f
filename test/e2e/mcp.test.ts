import * as grpc from '@grpc/grpc-js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { callUnary } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminCli, createWorkspace, issueToken, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import {
  addMember,
  createApiKey,
  createProject,
  createProjectWithTasks,
  expectError,
  getTask,
  keyOf,
  listProjects,
  listTasks,
  patchTask,
  plainText,
  pollUntil,
  type CreatedProject,
  type Member,
} from '../support/fixtures.js';
import { signToken } from '../support/jwt.js';
import { TaskEventReader } from '../support/task-events.js';

/**
 * The MCP server at {base_url}/mcp, driven by the official SDK client (Client +
 * StreamableHTTPClientTransport) against the stack's gateway: discovery (401 naming the
 * protected-resource metadata, the metadata document), every tool through the REST code path with an
 * API key (events, comment attribution, REST visibility), Bearer tokens (read sees read tools only,
 * read write writes as the person, a non-member workspace is the REST 403), task resources by URL,
 * and hostile input.
 */
const stack = inject('stack');
const proto = loadTasksProto().tasks.v1;
const taskPage = new proto.TaskPageService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
const settings = new proto.SettingsService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
const mcpUrl = new URL('/mcp', stack.gatewayUrl);
const mcpHeaders = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

const clients: Client[] = [];
async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'tws-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers } }));
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The JSON a successful tool call returned (its structured content; lists are `{items}`). */
function ok<T = Record<string, unknown>>(result: CallToolResult): T {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as T;
}

const textOf = (result: CallToolResult): string => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

const comments = async (ws: TestWorkspace, taskId: string) =>
  (await callUnary(taskPage, taskPage.ListComments, { acting: { workspaceId: ws.workspace.id, userId: ws.owner.userId }, taskId })).comments;

const rawPost = (body: string, headers: Record<string, string>) => fetch(mcpUrl, { method: 'POST', headers: { ...mcpHeaders, ...headers }, body });

const readTools = ['get_workspace', 'list_members', 'list_statuses', 'list_projects', 'list_sections', 'list_tasks', 'get_task', 'find_tasks'];
const writeTools = ['create_task', 'update_task', 'delete_task', 'add_comment'];

let events: TaskEventReader;
let ws: TestWorkspace;
let other: TestWorkspace;
let key: Credentials;
let member: Member;
let project: CreatedProject;
let taskPrefix: string;

beforeAll(async () => {
  events = await TaskEventReader.start(stack.kafkaBrokers);
  [ws, other] = await Promise.all([createWorkspace({ plan: 'pro' }), createWorkspace()]);
  key = keyOf(ws);
  member = await addMember(ws.workspace.id, 'member');
  project = await createProject(key);
  taskPrefix = (await listProjects(key)).find((candidate) => candidate.id === project.id)!.taskPrefix;
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await events?.stop();
});

describe('discovery', () => {
  it('/mcp without credentials answers 401 naming the protected-resource metadata', async () => {
    const response = await rawPost(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), {});
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain(
      `resource_metadata="${stack.gatewayUrl}/.well-known/oauth-protected-resource"`,
    );
    expect(await response.json()).toEqual({ error: expect.stringContaining('missing credentials') });
  });

  it('the protected-resource metadata names the app as the authorization server (RFC 9728)', async () => {
    const response = await api('GET', '/.well-known/oauth-protected-resource');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      resource: stack.gatewayUrl,
      authorization_servers: [stack.webUrl],
      scopes_supported: ['read', 'write'],
      bearer_methods_supported: ['header'],
      resource_name: 'Task workspace API',
    });
  });
});

describe('with an API key', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect({ 'x-api-key': ws.apiKey.key });
  });

  it('lists every tool with its JSON Schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([...readTools, ...writeTools]);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(20);
      expect(tool.inputSchema.type).toBe('object');
    }
  });

  it('creates, comments, updates, finds, reads by URL and deletes a task: the REST API sees each change', async () => {
    const name = `MCP task ${Date.now()}`;
    const created = ok<{ id: string; number: number }>(
      await call(client, 'create_task', { projectId: project.id, listId: project.defaultListId, name, description: '## Plan\n\n- **zebra** crossing' }),
    );
    const task = await getTask(key, created.id);
    expect(task).toMatchObject({ id: created.id, number: created.number, name, projectId: project.id });
    expect(plainText(task.description ?? [])).toContain('zebra crossing');
    await pollUntil(async () => events.of(created.id, 'task.created'), (found) => found.length === 1, { timeoutMs: 20_000 });
    expect(events.of(created.id, 'task.created')).toHaveLength(1);

    ok(await call(client, 'add_comment', { taskId: created.id, text: 'From an **agent**' }));
    expect((await comments(ws, created.id)).map((comment) => [comment.authorName, comment.authorUserId ?? null])).toEqual([[ws.apiKey.name, null]]);

    const updated = ok(await call(client, 'update_task', { taskId: created.id, isCompleted: true }));
    expect(updated).toMatchObject({ id: created.id, isCompleted: true });
    expect((await getTask(key, created.id)).isCompleted).toBe(true);

    const found = ok<{ matches: Array<{ id: string; matchedIn: string }>; truncated: boolean }>(await call(client, 'find_tasks', { text: 'ZEBRA' }));
    expect(found.matches).toEqual([expect.objectContaining({ id: created.id, matchedIn: 'description' })]);
    expect(found.truncated).toBe(false);

    const uri = `${stack.webUrl}/${ws.workspace.urlId}/task/${taskPrefix}-${created.number}`;
    const resource = await client.readResource({ uri });
    const content = resource.contents[0]!;
    expect(JSON.parse('text' in content ? content.text : '{}')).toMatchObject({ id: created.id, name, isCompleted: true });
    await expect(client.readResource({ uri: `${stack.webUrl}/${ws.workspace.urlId}/task/${taskPrefix}-99999` })).rejects.toThrow(/task not found/);

    ok(await call(client, 'delete_task', { taskId: created.id }));
    expectError(await api('GET', `/v1/tasks/${created.id}`, { credentials: key }), 404);
  });

  it('list_tasks pages with nextCursor: every task once, in list order; a page never reads the whole list', async () => {
    const { project: paged, tasks } = await createProjectWithTasks(key, 7);
    await patchTask(key, tasks[1]!.id, { isCompleted: true });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = ok<{ tasks: Array<{ id: string }>; nextCursor?: string }>(
        await call(client, 'list_tasks', { projectId: paged.id, limit: 3, ...(cursor === undefined ? {} : { cursor }) }),
      );
      expect(page.tasks.length).toBeLessThanOrEqual(3);
      seen.push(...page.tasks.map((task) => task.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual((await listTasks(key, paged.id)).map((task) => task.id));
    const open = ok<{ tasks: Array<{ id: string }>; nextCursor?: string }>(await call(client, 'list_tasks', { projectId: paged.id, isCompleted: false }));
    expect(open.tasks.map((task) => task.id)).toEqual(seen.filter((id) => id !== tasks[1]!.id));
    expect(open.nextCursor).toBeUndefined();
    const bad = await call(client, 'list_tasks', { projectId: paged.id, cursor: 'not-a-cursor' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/cursor/);
  });

  it('the REST rules answer for the tools: validation and not found', async () => {
    const blank = await call(client, 'create_task', { projectId: project.id, listId: project.defaultListId, name: 'x'.repeat(300) });
    expect(blank.isError).toBe(true);
    expect(textOf(blank)).toBe('body.name: must be at most 255 characters (400)');
    const missing = await call(client, 'get_task', { taskId: '00000000-0000-4000-8000-000000000000' });
    expect(textOf(missing)).toBe('task not found (404)');
  });
});

describe('with a Bearer token', () => {
  it('a read token sees only the read tools, and a write tool is refused', async () => {
    const client = await connect({ authorization: `Bearer ${await issueToken(ws.workspace.id, member.userId, 'read')}` });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(readTools);
    expect(tools[0]!.inputSchema.required).toContain('workspaceId');
    const read = ok(await call(client, 'get_workspace', { workspaceId: ws.workspace.id }));
    expect(read).toMatchObject({ id: ws.workspace.id });
    const refused = await call(client, 'create_task', { workspaceId: ws.workspace.id, projectId: project.id, listId: project.defaultListId, name: 'No' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/needs the "write" scope.*"read" only/);
  });

  it('a read write token creates a task and comments as the person; a non-member workspace is the REST 403', async () => {
    const client = await connect({ authorization: `Bearer ${await issueToken(ws.workspace.id, member.userId, 'read write')}` });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([...readTools, ...writeTools]);
    const created = ok<{ id: string }>(
      await call(client, 'create_task', { workspaceId: ws.workspace.id, projectId: project.id, listId: project.defaultListId, name: 'By a person' }),
    );
    expect((await getTask(key, created.id)).name).toBe('By a person');
    ok(await call(client, 'add_comment', { workspaceId: ws.workspace.id, taskId: created.id, text: 'Mine' }));
    expect((await comments(ws, created.id)).map((comment) => [comment.authorName, comment.authorUserId])).toEqual([[member.name, member.userId]]);

    const elsewhere = await call(client, 'list_projects', { workspaceId: other.workspace.id });
    expect(elsewhere.isError).toBe(true);
    expect(textOf(elsewhere)).toBe('not a member of this workspace (403)');
    const none = await call(client, 'list_projects', {});
    expect(textOf(none)).toMatch(/^workspaceId: required with a Bearer token/);
  });

  it('a person removed from the workspace gets the REST 403 on the next tool call', async () => {
    const leaving = await addMember(ws.workspace.id, 'member');
    const client = await connect({ authorization: `Bearer ${await issueToken(ws.workspace.id, leaving.userId, 'read write')}` });
    ok(await call(client, 'list_projects', { workspaceId: ws.workspace.id }));
    await callUnary(settings, settings.RemoveMember, { acting: { workspaceId: ws.workspace.id, userId: ws.owner.userId }, userId: leaving.userId });
    expect(textOf(await call(client, 'list_projects', { workspaceId: ws.workspace.id }))).toBe('not a member of this workspace (403)');
  });

  it('a token for another audience is refused with 401 and the metadata challenge', async () => {
    const token = await signToken({ sub: member.userId, scope: 'read write', aud: 'https://elsewhere.example' });
    const response = await rawPost(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { authorization: `Bearer ${token}` });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/resource_metadata=".*\/\.well-known\/oauth-protected-resource", error="invalid_token"$/);
  });
});

describe('hostile input', () => {
  it('unknown tools, huge arguments, bad JSON-RPC and oversized batches are refused cleanly', async () => {
    const client = await connect({ 'x-api-key': ws.apiKey.key });
    const unknown = await call(client, 'drop_database', {});
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^unknown tool "drop_database"/);

    const headers = { 'x-api-key': ws.apiKey.key };
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add_comment', arguments: { text: 'x'.repeat(2 * 1024 * 1024) } } });
    const tooLarge = await rawPost(huge, headers);
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({ error: 'request body is too large' });

    const notJson = await rawPost('{"jsonrpc": "2.0", "id": 1, "method": ', headers);
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ error: 'request body is not valid JSON' });

    const wrongVersion = await rawPost(JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'tools/list' }), headers);
    expect(wrongVersion.status).toBe(400);

    const batch = JSON.stringify(Array.from({ length: 21 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'tools/list' })));
    const tooMany = await rawPost(batch, headers);
    expect(tooMany.status).toBe(400);
    expect(await tooMany.json()).toEqual({ error: 'body: must have at most 20 items' });

    const noMethod = await rawPost(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/drop' }), headers);
    expect(await noMethod.json()).toMatchObject({ error: { code: -32601 } });
  });
});

describe('operations', () => {
  it('tool calls are counted by tool and outcome', async () => {
    const client = await connect({ 'x-api-key': ws.apiKey.key });
    ok(await call(client, 'list_statuses', {}));
    const metrics = await (await fetch(new URL('/metrics', stack.gatewayUrl))).text();
    expect(metrics).toMatch(/^mcp_tool_calls_total\{tool="list_statuses",outcome="ok"[^}]*\} [1-9]/m);
    expect(metrics).toMatch(/^mcp_tool_calls_total\{tool="create_task",outcome="refused"[^}]*\} [1-9]/m);
    expect(metrics).toMatch(/^mcp_tool_call_duration_seconds_count\{[^}]*tool="find_tasks"[^}]*\} [1-9]/m);
  });

  it('a revoked API key is refused on the next MCP request', async () => {
    const second = await createApiKey(ws.workspace.id, ws.owner.userId);
    const client = await connect({ 'x-api-key': second.key });
    ok(await call(client, 'get_workspace', {}));
    expect((await adminCli(['apikey', 'revoke', '--workspace', ws.workspace.id, '--id', second.id])).code).toBe(0);
    // The SDK client surfaces the 401 with the gateway's {"error"} body.
    await expect(call(client, 'get_workspace', {})).rejects.toThrow(/invalid API key/);
  });
});
