import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createJsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';

const description = `REST/JSON API of the task workspace service.

Authenticate with an API key (\`X-API-Key\`, full access to its workspace) or a Bearer JWT plus
\`X-Workspace-Id\` (scope \`read\` allows GET only, \`write\` everything; the user must be a member of
the workspace). Webhooks are managed with an API key only.

Every error is \`{"error": "<message>"}\`. Requests are rate-limited per credential (token bucket,
shared by every server replica): over the limit the answer is 429 with \`Retry-After\` (seconds).
Every answer to a limited request carries the IETF draft's \`RateLimit-Policy: "default";q=<burst>;w=<seconds>\`
(q requests per w seconds: q / w is the sustained rate) and \`RateLimit: "default";r=<remaining>;t=<seconds until full again>\`.

Every response carries \`X-Request-Id\`: the one the request sent when it is 1–128 characters of
\`A-Z a-z 0-9 - _ . : / + = @\`, otherwise a new UUID. Quote it when reporting a problem: every
service that handled the request logged it.`;

/** The parts of the generated document `finish` touches. */
interface OpenApiParts {
  components?: { schemas?: Record<string, unknown> } & Record<string, unknown>;
  paths?: Record<
    string,
    Record<string, { parameters?: unknown[]; responses?: Record<string, { headers?: Record<string, unknown>; description?: string; content?: unknown }> } | undefined> | undefined
  >;
}

const retryAfter = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
};

/** draft-ietf-httpapi-ratelimit-headers; absent when the server runs without a limit (domain/rate-limit/headers.ts). */
const rateLimitHeaders = {
  'RateLimit-Policy': {
    description: 'The limit: q requests per w seconds (the bucket size, and the time an empty bucket takes to refill), e.g. `"default";q=200;w=4`.',
    schema: { type: 'string', pattern: '^"default";q=\\d+;w=\\d+$' },
  },
  RateLimit: {
    description: 'This credential now: r requests may still be sent at once; the bucket is full again in t seconds, e.g. `"default";r=199;t=1`.',
    schema: { type: 'string', pattern: '^"default";r=\\d+;t=\\d+$' },
  },
};

const requestIdSchema = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9\\-_.:/+=@]+$' };
const requestIdHeader = {
  'X-Request-Id': {
    description: 'The id of this request: the one it sent if sane, else a new UUID; every service that handled it logged it.',
    required: true,
    schema: requestIdSchema,
  },
};
const requestIdParameter = {
  in: 'header',
  name: 'X-Request-Id',
  required: false,
  description: 'Your id for this request (1–128 characters of A-Z a-z 0-9 - _ . : / + = @); any other value is replaced with a new UUID.',
  schema: { type: 'string' },
};

const etagHeader = {
  ETag: {
    description: 'Strong entity tag of this representation: send it as If-None-Match (304 when still current) or as If-Match of a PATCH (412 when no longer current).',
    required: true,
    schema: { type: 'string', pattern: '^"[\\x21\\x23-\\x7e]*"$' },
  },
};

/** Whether an operation takes If-None-Match: its 200 and 304 answers carry an ETag. */
const takesIfNoneMatch = (parameters: unknown[] | undefined): boolean =>
  (parameters ?? []).some((parameter) => typeof parameter === 'object' && parameter !== null && 'name' in parameter && parameter.name === 'if-none-match');

/** Every `$ref` target reachable from `value`. */
function collectRefs(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectRefs(item, into);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') into.add(item.replace('#/components/schemas/', ''));
      else collectRefs(item, into);
    }
  }
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/**
 * Answers of the router itself, before a route runs, on every path with a parameter (fastify's
 * `maxParamLength` is 100; `frameworkErrors` in plugins/errors.ts gives them the usual body).
 */
const pathParameterErrors = {
  '400': errorResponse('Malformed URL: a path parameter with an invalid percent-encoding'),
  '414': errorResponse('A path parameter is over 100 characters'),
};

/**
 * Final touches: the zod transform emits an input and an output copy of every registered schema;
 * only the referenced ones are kept. 429 answers document their Retry-After header, the 200 and 304
 * answers of operations taking If-None-Match their ETag; paths with
 * parameters document the router's 400 and 414; every operation takes an optional X-Request-Id and
 * every answer carries one, and the RateLimit headers when the limit is on.
 */
function finish<Document extends object>(generated: Document): Document {
  const document = generated as OpenApiParts;
  const schemas: Record<string, unknown> = { ...(document.components?.schemas ?? {}) };
  const used = new Set<string>();
  collectRefs(document.paths, used);
  for (let grown = true; grown; ) {
    const before = used.size;
    for (const name of [...used]) collectRefs(schemas[name], used);
    grown = used.size > before;
  }
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
  for (const [path, pathItem] of Object.entries(document.paths ?? {})) {
    for (const operation of Object.values(pathItem ?? {})) {
      if (!operation) continue;
      const tooMany = operation.responses?.['429'];
      if (tooMany) tooMany.headers = { ...retryAfter };
      if (takesIfNoneMatch(operation.parameters)) {
        for (const code of ['200', '304']) {
          const tagged = operation.responses?.[code];
          if (tagged) tagged.headers = { ...tagged.headers, ...etagHeader };
        }
      }
      if (operation.responses && path.includes('{')) operation.responses = { ...pathParameterErrors, ...operation.responses };
      operation.parameters = [...(operation.parameters ?? []), requestIdParameter];
      const responses = operation.responses ?? {};
      for (const [code, response] of Object.entries(responses)) responses[code] = { ...response, headers: { ...requestIdHeader, ...rateLimitHeaders, ...response.headers } };
    }
  }
  return { ...generated, components: { ...document.components, schemas } };
}

/**
 * OpenAPI 3.1 generated from the routes' zod schemas (the same ones that validate and serialize):
 * `/openapi.json`, and Swagger UI at `/docs`. Must be registered before the routes it describes.
 */
async function openApiPlugin(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Task Workspace API', version: '1.0.0', description },
      tags: [
        { name: 'Workspace', description: 'Workspace, members and statuses' },
        { name: 'Projects' },
        { name: 'Sections', description: 'Lists inside a project' },
        { name: 'Tasks' },
        { name: 'Comments' },
        { name: 'Attachments', description: 'Three-step file upload and permanent download URLs' },
        { name: 'Webhooks', description: 'Signed task-change notifications to your HTTPS endpoints (API key only)' },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key of a workspace.' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'User access token; send X-Workspace-Id too.' },
          workspaceId: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Workspace-Id',
            description: 'Workspace the Bearer token acts in (required with a Bearer token).',
          },
        },
      },
      // Either an API key, or a Bearer token together with X-Workspace-Id.
      security: [{ apiKey: [] }, { bearer: [], workspaceId: [] }],
    },
    transform: createJsonSchemaTransform({ skipList: ['/openapi.json', '/docs', '/docs/*'] }),
    transformObject: (document) => finish(jsonSchemaTransformObject(document)),
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

export default fp(openApiPlugin, { name: 'openapi' });
