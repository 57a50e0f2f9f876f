import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { GatewayConfig } from '../../config.js';
import type { McpMetrics } from '../../metrics.js';
import { protectedResourceMetadataPath } from '../../plugins/auth.js';
import { restAs } from './rest.js';
import { buildMcpServer } from './server.js';

export interface McpOptions {
  config: GatewayConfig;
  metrics: McpMetrics;
}

/** JSON-RPC messages one POST may carry (a batch): each tool call runs REST calls, so it is bounded. */
export const maxBatchMessages = 20;
/** One tool call or resource read at most (each REST call inside also has the gRPC deadline). */
export const mcpCallTimeoutMs = 30_000;

const JsonRpcMessage = z.looseObject({ jsonrpc: z.literal('2.0') });
const JsonRpcBody = z
  .union([JsonRpcMessage, z.array(JsonRpcMessage).min(1).max(maxBatchMessages)])
  .meta({ description: `One JSON-RPC 2.0 message, or a batch of at most ${maxBatchMessages}.` });

/** Headers the transport must not see copied onto a body-less Request (the body was parsed by fastify). */
const skippedHeaders = new Set(['content-length', 'transfer-encoding', 'connection', 'host', 'keep-alive', 'upgrade']);

function webRequest(request: FastifyRequest, url: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (skippedHeaders.has(name) || value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(url, { method: request.method, headers });
}

/** The JSON-RPC error body the transport itself uses. */
const jsonRpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

/**
 * The MCP server at `{base_url}/mcp` (Streamable HTTP transport of `@modelcontextprotocol/sdk`) and
 * the protected-resource metadata (RFC 9728) that tells an MCP client where to get a token.
 *
 * Stateless: every POST gets a fresh MCP server and transport (`sessionIdGenerator: undefined`)
 * answering with plain JSON (`enableJsonResponse`), then both are closed. Nothing is kept between
 * requests, so any gateway replica can answer any request behind a plain round-robin load balancer
 * (no sticky sessions, no shared session store), a replica can restart without breaking a client,
 * and revocation needs nothing more: every request authenticates again. The tools need no
 * server-to-client messages (sampling, progress, subscriptions), which are what sessions and the
 * SSE stream would buy. GET (the server-initiated stream) and DELETE (ending a session) are
 * therefore 405 after authentication, as the transport specification allows.
 *
 * Authentication is the REST API's (`auth: { credentialOnly: true }` in plugins/auth.ts): an API
 * key, or a Bearer token of any scope (the workspace is a tool argument); a 401 names the metadata
 * document in `WWW-Authenticate`. Body limit, JSON-only bodies and the per-credential rate limit are
 * the REST API's too, and each tool call is a REST call (rest.ts).
 */
const mcpRoutes: FastifyPluginAsyncZod<McpOptions> = async (app, options) => {
  const { config, metrics } = options;
  const baseUrl = config.PUBLIC_BASE_URL;
  const metadata = {
    resource: baseUrl,
    ...(config.OAUTH_AUTHORIZATION_SERVER_URL ? { authorization_servers: [config.OAUTH_AUTHORIZATION_SERVER_URL] } : {}),
    scopes_supported: ['read', 'write'],
    bearer_methods_supported: ['header'],
    resource_name: 'Task workspace API',
  };
  const ProtectedResourceMetadata = z.object({
    resource: z.string(),
    authorization_servers: z.array(z.string()).optional(),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
    resource_name: z.string(),
  });
  // RFC 9728 §3.1: at the root for the resource `{base_url}`, and path-inserted for `{base_url}/mcp`,
  // which MCP clients also try.
  for (const path of [protectedResourceMetadataPath, `${protectedResourceMetadataPath}/mcp`]) {
    app.get(
      path,
      { config: { auth: false }, schema: { hide: true, response: { 200: ProtectedResourceMetadata } } },
      async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(metadata),
    );
  }

  const auth = { credentialOnly: true } as const;
  const notAllowed = 'this MCP server is stateless: send JSON-RPC requests with POST (no server-initiated stream, no session to end)';
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      config: { auth },
      schema: { hide: true },
      handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send(jsonRpcError(-32000, notAllowed)),
    });
  }

  app.post('/mcp', { config: { auth }, schema: { hide: true, body: JsonRpcBody } }, async (request, reply) => {
    const caller = request.caller;
    const header = request.headers['x-workspace-id'];
    const defaultWorkspaceId = caller.kind === 'user' && typeof header === 'string' && header.trim() !== '' ? header.trim() : undefined;
    const server = buildMcpServer({
      caller,
      defaultWorkspaceId,
      restIn: (workspaceId) => restAs(app, request, caller, workspaceId),
      appUrl: config.APP_PUBLIC_URL,
      metrics,
      log: request.log,
      callTimeoutMs: mcpCallTimeoutMs,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const response = await transport.handleRequest(webRequest(request, `${baseUrl}/mcp`), { parsedBody: request.body });
      reply.code(response.status);
      response.headers.forEach((value, name) => {
        if (name !== 'content-length') void reply.header(name, value);
      });
      const text = await response.text();
      return await reply.send(text === '' ? undefined : text);
    } finally {
      await server.close();
    }
  });
};

export default mcpRoutes;
