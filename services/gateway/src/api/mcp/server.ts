import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { requiredScope, type Caller } from '../../domain/auth/principal.js';
import type { McpMetrics } from '../../metrics.js';
import { parseTaskUrl, readTask, taskUriTemplate } from './resources.js';
import { RestError, type Rest } from './rest.js';
import { checkKnownArguments, ToolInputError, tools, type ToolDefinition } from './tools.js';

export interface McpContext {
  caller: Caller;
  /** X-Workspace-Id sent with the MCP request: a Bearer caller's default workspace. */
  defaultWorkspaceId: string | undefined;
  /** The REST API as the caller, in a workspace (ignored for an API key: the key's own). */
  restIn(workspaceId: string | undefined): Rest;
  /** The app's public URL (APP_PUBLIC_URL): task resources live under it. */
  appUrl: string | undefined;
  metrics: McpMetrics;
  log: FastifyBaseLogger;
  /** Bound on one tool call or resource read (each REST call inside has the gRPC deadline too). */
  callTimeoutMs: number;
}

const instructions =
  'Task workspace: projects hold sections (lists) which hold tasks; tasks have statuses, assignees (member userIds), ' +
  'markdown descriptions and comments. Start with list_projects, list_sections and list_statuses for the ids other tools take. ' +
  'With a Bearer token pass `workspaceId` (a workspace you are a member of) to every tool. A task is also a resource at its URL ' +
  '`{app_url}/{urlId}/task/{taskPrefix}-{number}`.';

/** The scope rule of the REST API (principal.ts): an API key may do everything, a token what its scopes allow. */
const mayUse = (caller: Caller, tool: ToolDefinition): boolean =>
  caller.kind === 'apiKey' || caller.scopes.has(requiredScope(tool.method));

const workspaceIdArg = z.string().meta({ description: 'The workspace to act in (its id): one you are a member of.' });

type Variant = 'apiKey' | 'user' | 'userWithDefault';
const schemas = new Map<string, Tool['inputSchema']>();

/** A tool's JSON Schema for a kind of caller, generated once from its zod input. */
function inputSchemaOf(tool: ToolDefinition, variant: Variant): Tool['inputSchema'] {
  const key = `${tool.name}:${variant}`;
  let schema = schemas.get(key);
  if (!schema) {
    const input =
      variant === 'apiKey'
        ? tool.input
        : tool.input.extend({ workspaceId: variant === 'user' ? workspaceIdArg : workspaceIdArg.optional() });
    const { $schema: _ignored, ...json } = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' });
    schema = { ...json, type: 'object' } as Tool['inputSchema'];
    schemas.set(key, schema);
  }
  return schema;
}

const byName = new Map(tools.map((tool) => [tool.name, tool]));

const failure = (text: string, extra: Record<string, unknown> = {}): CallToolResult => ({
  content: [{ type: 'text', text }],
  structuredContent: { error: text, ...extra },
  isError: true,
});

const success = (value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { items: value },
});

class CallTimeout extends Error {}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new CallTimeout()), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function restFailure(error: RestError): string {
  if (error.status === 429) return `rate limit exceeded (429): retry after ${error.retryAfter ?? 'a few'} seconds`;
  return `${error.message} (${error.status})`;
}

/** One MCP server per HTTP request (stateless): its handlers close over the caller. */
export function buildMcpServer(context: McpContext): Server {
  const { caller, metrics } = context;
  const server = new Server(
    { name: 'task-workspace', title: 'Task workspace', version: '1.0.0' },
    { capabilities: { tools: {}, resources: {} }, instructions },
  );
  const variant: Variant = caller.kind === 'apiKey' ? 'apiKey' : context.defaultWorkspaceId ? 'userWithDefault' : 'user';

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools
      .filter((tool) => mayUse(caller, tool))
      .map((tool) => ({
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: inputSchemaOf(tool, variant),
        annotations: { readOnlyHint: tool.method === 'GET', destructiveHint: tool.method === 'DELETE', openWorldHint: false },
      })),
  }));

  /** Runs and measures one call; `tool` is a known name or `unknown`, a bounded label. */
  async function measured(tool: string, run: () => Promise<CallToolResult>): Promise<CallToolResult> {
    const stop = metrics.duration.startTimer({ tool });
    let outcome = 'error';
    try {
      const result = await run();
      outcome = result.isError ? String(result.structuredContent?.outcome ?? 'tool_error') : 'ok';
      return result;
    } finally {
      stop();
      metrics.calls.inc({ tool, outcome });
      context.log.info({ tool, outcome, caller: caller.kind }, 'mcp tool call');
    }
  }

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) {
      const name = JSON.stringify(request.params.name.slice(0, 100));
      return measured('unknown', async () =>
        failure(`unknown tool ${name}: tools/list names the tools this credential may use`, { outcome: 'invalid' }),
      );
    }
    return measured(tool.name, async () => {
      if (!mayUse(caller, tool)) {
        return failure(
          `${tool.name} changes data and needs the "write" scope, but this token was granted "read" only: ` +
            'connect again and grant read write access to use it',
          { outcome: 'refused' },
        );
      }
      const args = request.params.arguments ?? {};
      const workspaceId = args.workspaceId ?? context.defaultWorkspaceId;
      if (caller.kind === 'user' && (typeof workspaceId !== 'string' || workspaceId === '')) {
        return failure('workspaceId: required with a Bearer token (the id of a workspace you are a member of)', { outcome: 'invalid' });
      }
      try {
        checkKnownArguments(tool, args);
        const rest = context.restIn(typeof workspaceId === 'string' ? workspaceId : undefined);
        return success(await withTimeout(tool.run(args, rest), context.callTimeoutMs));
      } catch (error) {
        if (error instanceof RestError) return failure(restFailure(error), { status: error.status, outcome: 'tool_error' });
        if (error instanceof ToolInputError) return failure(error.message, { outcome: 'invalid' });
        if (error instanceof CallTimeout) {
          return failure(`timed out after ${context.callTimeoutMs / 1000} s: try a narrower request`, { outcome: 'timeout' });
        }
        context.log.error({ err: error, tool: tool.name }, 'mcp tool call failed');
        return failure('internal error', { outcome: 'error' });
      }
    });
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates:
      context.appUrl === undefined
        ? []
        : [
            {
              uriTemplate: taskUriTemplate(context.appUrl),
              name: 'task',
              title: 'Task',
              description: 'A task by its URL, taskRef = {taskPrefix}-{number} (e.g. WEB-12): the task as get_task returns it.',
              mimeType: 'application/json',
            },
          ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    const stop = metrics.duration.startTimer({ tool: 'resource:task' });
    let outcome = 'error';
    try {
      const ref = context.appUrl === undefined ? undefined : parseTaskUrl(uri, context.appUrl);
      if (ref === undefined) {
        outcome = 'invalid';
        throw new McpError(ErrorCode.InvalidParams, 'not a task URL of this service: expected {app_url}/{urlId}/task/{taskPrefix}-{number}');
      }
      if (caller.kind === 'user' && !context.defaultWorkspaceId) {
        outcome = 'invalid';
        throw new McpError(
          ErrorCode.InvalidParams,
          'with a Bearer token, send the X-Workspace-Id header with MCP requests to read task resources (or call get_task with workspaceId)',
        );
      }
      const task = await withTimeout(readTask(context.restIn(context.defaultWorkspaceId), ref), context.callTimeoutMs);
      outcome = 'ok';
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(task) }] };
    } catch (error) {
      if (error instanceof McpError) throw error;
      if (error instanceof RestError) {
        outcome = 'tool_error';
        throw new McpError(error.status === 404 ? -32002 : ErrorCode.InvalidRequest, restFailure(error));
      }
      if (error instanceof CallTimeout) {
        outcome = 'timeout';
        throw new McpError(ErrorCode.InternalError, `timed out after ${context.callTimeoutMs / 1000} s`);
      }
      context.log.error({ err: error }, 'mcp resource read failed');
      throw new McpError(ErrorCode.InternalError, 'internal error');
    } finally {
      stop();
      metrics.calls.inc({ tool: 'resource:task', outcome });
    }
  });

  return server;
}
