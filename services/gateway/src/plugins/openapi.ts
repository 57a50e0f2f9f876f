import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createJsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { idempotencyKeyJsonPattern } from '../domain/idempotency.js';
import { webhookDocs } from './openapi-webhooks.js';

const description = `REST/JSON API of the task workspace service.

Authenticate with an API key (\`X-API-Key\`, full access to its workspace) or a Bearer JWT plus
\`X-Workspace-Id\` (scope \`read\` allows GET only, \`write\` everything; the user must be a member of
the workspace). Webhooks are managed with an API key only.

Every error is \`{"error": "<message>"}\`. Requests are rate-limited per credential (token bucket,
shared by every server replica): over the limit the answer is 429 with \`Retry-After\` (seconds).
Every answer to a limited request carries the IETF draft's \`RateLimit-Policy: "default";q=<burst>;w=<seconds>\`
(q requests per w seconds: q / w is the sustained rate) and \`RateLimit: "default";r=<remaining>;t=<seconds until full again>\`.

The \`webhooks\` section describes the signed POSTs sent to registered endpoints: payloads, headers
(contract and Standard Webhooks signatures) and the answers expected.

Every response carries \`X-Request-Id\`: the one the request sent when it is 1–128 characters of
\`A-Z a-z 0-9 - _ . : / + = @\`, otherwise a new UUID. Quote it when reporting a problem: every
service that handled the request logged it.

Every POST under \`/v1\` takes an optional \`Idempotency-Key\` (1–255 visible ASCII characters, e.g. a
UUID): its first answer (2xx, or a 4xx other than 401/408/425/429) is kept 24 h and sent again, with
\`Idempotent-Replayed: true\`, for a retry with the same key, credential and body; the same key with
another body or path is 422; while the first request still runs, 409 with \`Retry-After: 1\`.`;

/** The parts of the generated document `finish` touches. */
interface Operation {
  parameters?: unknown[];
  responses?: Record<string, { headers?: Record<string, unknown>; description?: string; content?: unknown }>;
}
interface OpenApiParts {
  components?: { schemas?: Record<string, unknown> } & Record<string, unknown>;
  paths?: Record<string, Record<string, Operation | undefined> | undefined>;
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

const nextPageHeader = {
  Link: {
    description: 'On a paged answer that is not the last page: `<absolute URL of the next page>; rel="next"` (RFC 8288).',
    required: false,
    schema: { type: 'string', pattern: '^<https?://[^>]+>; rel="next"$' },
  },
};

const etagHeader = {
  ETag: {
    description: 'Strong entity tag of this representation: send it as If-None-Match (304 when still current) or as If-Match of a PATCH (412 when no longer current).',
    required: true,
    schema: { type: 'string', pattern: '^"[\\x21\\x23-\\x7e]*"$' },
  },
};

const idempotencyKeyParameter = {
  in: 'header',
  name: 'Idempotency-Key',
  required: false,
  description:
    'Makes a retry safe: the first answer (2xx, or a 4xx other than 401/408/425/429; body at most 64 KiB) is stored for 24 h per workspace and key, ' +
    'and sent again with `Idempotent-Replayed: true` for a request with the same key, credential, path and body.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: idempotencyKeyJsonPattern },
};
const replayedHeader = {
  'Idempotent-Replayed': {
    description: 'Present (`true`) when this is the stored answer of an earlier request with the same Idempotency-Key.',
    required: false,
    schema: { type: 'string', enum: ['true'] },
  },
};
const idempotencyErrors = {
  '409': { description: 'A request with this Idempotency-Key is still being processed: retry after Retry-After seconds' },
  '422': { description: 'This Idempotency-Key was already used for a different request (method, path, credential or body)' },
};

/** Whether an operation takes the header `name` (If-None-Match: its 200 and 304 answers carry an ETag; If-Match: its 200). */
const takesHeader = (parameters: unknown[] | undefined, name: string): boolean =>
  (parameters ?? []).some((parameter) => typeof parameter === 'object' && parameter !== null && 'name' in parameter && parameter.name === name);

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

/** A POST of /v1 (plugins/idempotency.ts): the Idempotency-Key parameter, its 409/422, the replay header on 2xx. */
function documentIdempotency(operation: Operation): void {
  operation.parameters = [...(operation.parameters ?? []), idempotencyKeyParameter];
  const responses = (operation.responses ??= {});
  for (const [code, response] of Object.entries(responses)) if (code.startsWith('2')) response.headers = { ...response.headers, ...replayedHeader };
  for (const [code, { description }] of Object.entries(idempotencyErrors)) {
    const declared = responses[code];
    responses[code] = declared ? { ...declared, description: `${declared.description ?? ''}; or: ${description}` } : errorResponse(description);
  }
  const conflict = responses['409'];
  if (conflict) conflict.headers = { ...conflict.headers, ...retryAfter };
}

/**
 * Final touches: the zod transform emits an input and an output copy of every registered schema;
 * only the referenced ones are kept. 429 answers document their Retry-After header, the 200 and 304
 * answers of operations taking If-None-Match their ETag (the 200 of those taking If-Match too), the 200 of
 * those taking a `cursor` its `Link` rel="next"; paths with
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
    for (const [method, operation] of Object.entries(pathItem ?? {})) {
      if (!operation) continue;
      const tooMany = operation.responses?.['429'];
      if (tooMany) tooMany.headers = { ...retryAfter };
      const taggedCodes = takesHeader(operation.parameters, 'if-none-match') ? ['200', '304'] : takesHeader(operation.parameters, 'if-match') ? ['200'] : [];
      for (const code of taggedCodes) {
        const tagged = operation.responses?.[code];
        if (tagged) tagged.headers = { ...tagged.headers, ...etagHeader };
      }
      const paged = operation.responses?.['200'];
      if (paged && takesHeader(operation.parameters, 'cursor')) paged.headers = { ...paged.headers, ...nextPageHeader };
      if (operation.responses && path.includes('{')) operation.responses = { ...pathParameterErrors, ...operation.responses };
      if (method === 'post' && path.startsWith('/v1/')) documentIdempotency(operation);
      operation.parameters = [...(operation.parameters ?? []), requestIdParameter];
      const responses = operation.responses ?? {};
      for (const [code, response] of Object.entries(responses)) responses[code] = { ...response, headers: { ...requestIdHeader, ...rateLimitHeaders, ...response.headers } };
    }
  }
  return { ...generated, components: { ...document.components, schemas } };
}

/** Adds the `webhooks` section (openapi-webhooks.ts) and the payload schemas it references. */
function withWebhooks<Document extends object>(document: Document): Document {
  const { webhooks, schemas } = webhookDocs();
  const components = (document as OpenApiParts).components;
  return { ...document, webhooks, components: { ...components, schemas: { ...components?.schemas, ...schemas } } };
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
    transformObject: (document) => withWebhooks(finish(jsonSchemaTransformObject(document))),
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

export default fp(openApiPlugin, { name: 'openapi' });
