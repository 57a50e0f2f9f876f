/**
 * The whole MCP OAuth dance against the local stack, as an MCP client runs it: the official SDK
 * (Client, StreamableHTTPClientTransport and its OAuthClientProvider, `auth()`) finds the
 * authorization server from the gateway's 401 and protected-resource metadata, registers itself
 * (RFC 7591), sends the person to the app in headless Chromium (sign-in at the local identity
 * provider, consent), exchanges the code with PKCE at its loopback redirect URI, and calls tools
 * with the app's access token, which the gateway trusts by default (AUTH_APP_ISSUER_URL). Then:
 * the task through REST, its signed webhook, the comment's author, refresh, a revoked grant refused
 * at once on two gateway replicas (MCP and REST), and the attacks (another audience, a `read`
 * token calling a write tool, a person removed from the workspace).
 */
import { verify } from '@octokit/webhooks-methods';
import * as grpc from '@grpc/grpc-js';
import { auth, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { TooManyRequestsError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { callUnary } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import { decodeJwt } from 'jose';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminCli, type TestWorkspace } from '../support/admin.js';
import { launchBrowser, openPage, type OpenedPage } from '../support/browser.js';
import { createProject, keyOf, type CreatedProject } from '../support/fixtures.js';
import { authorizeInBrowser, callbackServer } from '../support/oauth.js';
import { startExtraGateway, type ExtraGateway } from '../support/second-gateway.js';
import { registerWebhook } from '../support/webhooks/fixtures.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';

const stack = inject('stack');
const webUrl = stack.webUrl;
const mcpUrl = new URL('/mcp', stack.gatewayUrl);
const person = stack.idp.users.find((user) => user.role === 'member')!;
const owner = stack.idp.users.find((user) => user.role === 'owner')!;
const proto = loadTasksProto().tasks.v1;
const taskPage = new proto.TaskPageService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
const settings = new proto.SettingsService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());

/** An MCP client's OAuth state, in memory; `authorizationUrl` is where it would send the person. */
class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(private readonly redirectUri: string) {}
  get redirectUrl(): string {
    return this.redirectUri;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP e2e client',
      redirect_uris: [this.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'read write',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

let browser: Browser;
let opened: OpenedPage;
let callback: Awaited<ReturnType<typeof callbackServer>>;
let second: ExtraGateway;
let elsewhere: ExtraGateway;
let receiver: TestReceiver;
let ws: TestWorkspace;
let leaving: TestWorkspace;
let project: CreatedProject;
let personId: string;
const webhookSecret = `whsec-${Math.random().toString(36).slice(2)}-0123456789`;
const clients: Client[] = [];

async function workspaceOf(name: string): Promise<TestWorkspace> {
  const created = await adminCli(['workspace', 'create', '--name', `${name} ${process.pid}`, '--plan', 'pro', '--owner-email', owner.email, '--owner-name', owner.name]);
  expect(created.code, JSON.stringify(created.json)).toBe(0);
  const workspace = created.json as unknown as TestWorkspace;
  const added = await adminCli(['member', 'add', '--workspace', workspace.workspace.id, '--email', person.email, '--name', person.name, '--role', 'member']);
  expect(added.code, JSON.stringify(added.json)).toBe(0);
  personId = (added.json as { member: { userId: string } }).member.userId;
  return workspace;
}

/** The dance up to the tokens: 401 → metadata → registration → the browser → the code with PKCE. */
async function connectWithOAuth(access: 'read write'): Promise<{ provider: MemoryProvider; client: Client }> {
  const provider = new MemoryProvider(callback.redirectUri);
  const attempt = async (): Promise<{ transport: StreamableHTTPClientTransport; refused: unknown }> => {
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    const refused = await new Client({ name: 'tws-e2e-oauth', version: '1.0.0' }).connect(transport).then(() => undefined, (error: unknown) => error);
    return { transport, refused };
  };
  let first = await attempt();
  if (first.refused instanceof TooManyRequestsError) {
    // Another test file registered its clients within the last minute (10 per minute per IP): wait it out once.
    await new Promise((resolve) => setTimeout(resolve, 61_000));
    first = await attempt();
  }
  expect(first.refused).toBeInstanceOf(UnauthorizedError);
  // Registered dynamically at the authorization server the protected-resource metadata named.
  expect(provider.client?.client_id).toMatch(/\S/);
  const code = await authorizeAt(provider, access);
  await first.transport.finishAuth(code);
  return { provider, client: await connected(provider) };
}

/** A client already registered asks for `scope` itself (the SDK's `auth()`), as a read-only integration does. */
async function authorizeWithScope(registered: OAuthClientInformationMixed, scope: 'read'): Promise<{ provider: MemoryProvider; client: Client }> {
  const provider = new MemoryProvider(callback.redirectUri);
  provider.client = registered;
  expect(await auth(provider, { serverUrl: mcpUrl, scope })).toBe('REDIRECT');
  expect(provider.authorizationUrl?.searchParams.get('scope')).toBe(scope);
  const code = await authorizeAt(provider, scope);
  expect(await auth(provider, { serverUrl: mcpUrl, scope, authorizationCode: code })).toBe('AUTHORIZED');
  return { provider, client: await connected(provider) };
}

/** The browser's part: sign-in at the identity provider and consent, when asked; the code the redirect carries. */
async function authorizeAt(provider: MemoryProvider, access: 'read' | 'read write'): Promise<string> {
  const url = provider.authorizationUrl!;
  expect(url.origin).toBe(webUrl);
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  expect(url.searchParams.get('resource')).toMatch(new RegExp(`^${stack.gatewayUrl}`));
  const answer = await authorizeInBrowser(opened.page, url.href, { redirectUri: callback.redirectUri, user: person, access });
  expect(answer.get('error'), answer.get('error_description') ?? '').toBeNull();
  return answer.get('code')!;
}

async function connected(provider: MemoryProvider): Promise<Client> {
  expect(provider.saved?.access_token).toMatch(/\S/);
  const client = new Client({ name: 'tws-e2e-oauth', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const textOf = (result: CallToolResult): string => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
function ok<T = Record<string, unknown>>(result: CallToolResult): T {
  expect(result.isError, textOf(result)).toBeFalsy();
  return result.structuredContent as T;
}

/** A REST call with a Bearer token at one gateway replica. */
const rest = (baseUrl: string, token: string, path: string, workspaceId = ws.workspace.id) =>
  fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${token}`, 'x-workspace-id': workspaceId } });
/** A raw MCP request with a Bearer token at one gateway replica. */
const mcpPost = (baseUrl: string, token: string) =>
  fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: { workspaceId: ws.workspace.id } } }),
  });

let dance: { provider: MemoryProvider; client: Client };

beforeAll(async () => {
  [ws, leaving] = [await workspaceOf('MCP OAuth'), await workspaceOf('MCP OAuth leaving')];
  project = await createProject(keyOf(ws));
  receiver = await startReceiver();
  await registerWebhook(keyOf(ws), { url: `${receiver.origin}/hooks`, secret: webhookSecret, events: ['task.created'] });
  // Two replicas of one deployment share its public name (the tokens' audience); a third answers to another name.
  [second, elsewhere] = await Promise.all([startExtraGateway(`mcp-oauth-${process.pid}`, { publicBaseUrl: stack.gatewayUrl }), startExtraGateway(`mcp-oauth-other-${process.pid}`)]);
  callback = await callbackServer();
  browser = await launchBrowser();
  opened = await openPage(browser);
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await opened?.close();
  await browser?.close();
  await callback?.close();
  await receiver?.close();
  await second?.stop();
  await elsewhere?.stop();
});

describe('the MCP OAuth dance (SDK client, Chromium, PKCE)', () => {
  it('401 → metadata → registration → sign-in and consent → tokens; tools/list and tools/call create a task as the person', { timeout: 120_000 }, async () => {
    const challenge = await fetch(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get('www-authenticate')).toContain(`resource_metadata="${stack.gatewayUrl}/.well-known/oauth-protected-resource"`);

    dance = await connectWithOAuth('read write');
    const token = dance.provider.saved!.access_token;
    expect(decodeJwt(token)).toMatchObject({ iss: webUrl, aud: stack.gatewayUrl, sub: personId, scope: 'read write' });
    const { tools } = await dance.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['create_task', 'add_comment', 'list_projects']));

    const created = ok<{ id: string; name: string }>(
      await call(dance.client, 'create_task', { workspaceId: ws.workspace.id, projectId: project.id, listId: project.defaultListId, name: 'Made over MCP' }),
    );
    // Visible through REST, with the same token, on both replicas.
    for (const base of [stack.gatewayUrl, second.url]) {
      const response = await rest(base, token, `/v1/tasks/${created.id}`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { name: string }).name).toBe('Made over MCP');
    }
    // Its task.created webhook arrives at the HTTPS receiver, signed.
    const [delivery] = await receiver.waitFor(1, 30_000);
    const raw = delivery!.body.toString('utf8');
    expect(await verify(webhookSecret, raw, String(delivery!.headers['x-service-signature']))).toBe(true);
    expect(JSON.parse(raw)).toMatchObject({ event: 'task.created', data: { id: created.id, name: 'Made over MCP' } });
    // A comment added over MCP is the person's.
    ok(await call(dance.client, 'add_comment', { workspaceId: ws.workspace.id, taskId: created.id, text: 'Said over MCP' }));
    const { comments } = await callUnary(taskPage, taskPage.ListComments, { acting: { workspaceId: ws.workspace.id, userId: ws.owner.userId }, taskId: created.id });
    expect(comments.map((comment) => [comment.authorName, comment.authorUserId])).toEqual([[person.name, personId]]);
  });

  it('refresh works: a new access token of the same grant, accepted', async () => {
    const before = dance.provider.saved!;
    expect(await auth(dance.provider, { serverUrl: mcpUrl })).toBe('AUTHORIZED');
    const after = dance.provider.saved!;
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(decodeJwt(after.access_token).grant_id).toBe(decodeJwt(before.access_token).grant_id);
    ok(await call(dance.client, 'list_projects', { workspaceId: ws.workspace.id }));
    expect((await rest(second.url, after.access_token, '/v1/workspace')).status).toBe(200);
  });
});

describe('attacks', () => {
  it('a token with another audience: a gateway under another name refuses it (401)', async () => {
    const token = dance.provider.saved!.access_token;
    const refused = await rest(elsewhere.url, token, '/v1/workspace');
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'invalid token: "aud" claim check failed' });
    expect((await mcpPost(elsewhere.url, token)).status).toBe(401);
  });

  it('a read grant: only read tools, a write tool is refused with a clear message, REST writes are 403', async () => {
    const { provider, client } = await authorizeWithScope(dance.provider.client!, 'read');
    expect(decodeJwt(provider.saved!.access_token).scope).toBe('read');
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).not.toContain('create_task');
    const refused = await call(client, 'create_task', { workspaceId: ws.workspace.id, projectId: project.id, listId: project.defaultListId, name: 'No' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/needs the "write" scope/);
    const post = await fetch(`${stack.gatewayUrl}/v1/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${provider.saved!.access_token}`, 'x-workspace-id': ws.workspace.id, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'No' }),
    });
    expect(post.status).toBe(403);
  });

  it('a person removed from a workspace: the tool call there is the REST 403, REST too', async () => {
    const token = dance.provider.saved!.access_token;
    ok(await call(dance.client, 'list_projects', { workspaceId: leaving.workspace.id }));
    await callUnary(settings, settings.RemoveMember, { acting: { workspaceId: leaving.workspace.id, userId: leaving.owner.userId }, userId: personId });
    expect(textOf(await call(dance.client, 'list_projects', { workspaceId: leaving.workspace.id }))).toBe('not a member of this workspace (403)');
    expect((await rest(second.url, token, '/v1/workspace', leaving.workspace.id)).status).toBe(403);
  });
});

describe('revoking the grant in settings (connected apps)', () => {
  it('the next MCP call and the next REST call with its token get 401, on both gateway replicas', async () => {
    const token = dance.provider.saved!.access_token;
    const grantId = String(decodeJwt(token).grant_id);
    // Both replicas have verified (and cached) the token before.
    for (const base of [stack.gatewayUrl, second.url]) expect((await rest(base, token, '/v1/workspace')).status).toBe(200);
    const page = opened.page;
    await page.goto(`${webUrl}/account/connected-apps`);
    await page.locator(`form[action$="/${grantId}/revoke"] button`).click();
    await page.waitForURL(`${webUrl}/account/connected-apps?notice=revoked`);
    for (const base of [stack.gatewayUrl, second.url]) {
      const refused = await rest(base, token, '/v1/workspace');
      expect(refused.status, base).toBe(401);
      expect(await refused.json()).toEqual({ error: 'token has been revoked' });
      expect((await mcpPost(base, token)).status, base).toBe(401);
    }
    // The web service recorded that the gateways acknowledged it (else its sweeper would announce it again).
    const db = new pg.Pool({ connectionString: stack.databaseUrl, max: 1, options: '-c search_path=web' });
    try {
      const { rows } = await db.query<{ announced_at: Date | null }>('SELECT announced_at FROM oauth_revoked_grants WHERE grant_id = $1', [grantId]);
      expect(rows[0]?.announced_at).toBeInstanceOf(Date);
    } finally {
      await db.end();
    }
    // The SDK client holding it cannot go on either (its refresh token died with the grant).
    await expect(call(dance.client, 'list_projects', { workspaceId: ws.workspace.id })).rejects.toThrow();
  });

  it('a gateway replica started after the revocation refuses the token too (the live revoked grants are read at subscription)', async () => {
    const token = dance.provider.saved!.access_token;
    const late = await startExtraGateway(`mcp-oauth-late-${process.pid}`, { publicBaseUrl: stack.gatewayUrl });
    try {
      const refused = await rest(late.url, token, '/v1/workspace');
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: 'token has been revoked' });
    } finally {
      await late.stop();
    }
  });
});
