import { z } from 'zod';
import { exampleTaskEvent, pingEventSchema, taskEventSchema, taskEventSchemaOf, type WebhookEventKind } from '@tws/contracts';

/*
 * The OpenAPI 3.1 `webhooks` section: what the service POSTs to a registered endpoint. The payload
 * schemas are generated from the writer schemas of @tws/contracts (the same ones the tasks service
 * checks every event with before it is published), so the document cannot drift from what is sent.
 */

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

const example = exampleTaskEvent;

const tolerant =
  'Receivers must ignore fields they do not know: fields may be added to a payload (never removed or changed) within v1.';

/** The payload schemas, each under its component id. */
function payloadSchemas(): Record<string, unknown> {
  const registry = z.registry<{ id: string; description?: string; examples?: unknown[] }>();
  const snapshot = taskEventSchema.shape.data;
  registry.add(snapshot.shape.labels.element, { id: 'WebhookTaskLabel', description: 'A label on the task.' });
  registry.add(snapshot, {
    id: 'WebhookTaskSnapshot',
    description: 'The task as it is after the change. Its `description` is never included: fetch it with `GET /v1/tasks/{id}`.',
  });
  const kinds = [
    ['task.created', 'WebhookTaskCreated', 'A task was created (`POST /v1/tasks`).', false],
    ['task.updated', 'WebhookTaskUpdated', 'A task changed in any other way (name, section, status, assignee, description, labels, un-completing).', false],
    ['task.completed', 'WebhookTaskCompleted', 'A task became completed (`isCompleted` turned from false to true, by `isCompleted` or a `done` status).', true],
  ] as const;
  for (const [kind, id, description, completed] of kinds) {
    registry.add(taskEventSchemaOf(kind), {
      id,
      description: `${description} ${tolerant}`,
      examples: [{ id: example.id, event: kind, createdAt: example.createdAt, data: { ...example.data, isCompleted: completed } }],
    });
  }
  registry.add(pingEventSchema, {
    id: 'WebhookPing',
    description: `Sent by \`POST /v1/webhooks/{id}/test\` to that endpoint only, whatever its \`events\`. ${tolerant}`,
    examples: [{ id: example.id, event: 'ping', createdAt: example.createdAt, data: { webhookId: 'a1d2c3b4-0000-4000-8000-00000000000a' } }],
  });
  const { schemas } = z.toJSONSchema(registry, { target: 'draft-2020-12', metadata: registry, uri: (id) => ref(id).$ref });
  return Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, documented(schema)]));
}

/**
 * A generated schema as a component: without the standalone `$schema`/`$id`, and without the
 * writer's `additionalProperties: false` (a receiver validating with it would break on an additive field).
 */
function documented(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(documented);
  if (value === null || typeof value !== 'object') return value;
  const kept = Object.entries(value).filter(([key, item]) => !(key === '$schema' || key === '$id' || (key === 'additionalProperties' && item === false)));
  return Object.fromEntries(kept.map(([key, item]) => [key, key === 'examples' ? item : documented(item)]));
}

const eventIdSchema = { type: 'string', pattern: '^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' };

/** The request headers of every delivery attempt (contract section 6, then Standard Webhooks). */
const headers = (kind: WebhookEventKind) => [
  { name: 'X-Service-Event', description: 'The event kind (= payload `event`).', schema: { type: 'string', const: kind } },
  {
    name: 'X-Service-Delivery',
    description: 'The event id (= payload `id`), identical on every attempt and redelivery of the event: deduplicate on it.',
    schema: eventIdSchema,
  },
  {
    name: 'X-Service-Signature',
    description:
      '`sha256=` + hex HMAC-SHA256 of the raw body bytes, keyed with the UTF-8 bytes of the secret registered for the endpoint. Verify it in constant time before parsing the body; answer 401 on mismatch. During a secret rotation overlap it is made with the new secret.',
    schema: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' },
  },
  { name: 'User-Agent', description: 'The webhook sender and its version.', schema: { type: 'string', const: 'Service-Webhook/1.0' } },
  { name: 'webhook-id', description: 'Standard Webhooks: the event id (= `X-Service-Delivery` = payload `id`).', schema: eventIdSchema },
  {
    name: 'webhook-timestamp',
    description:
      'Standard Webhooks: unix seconds at which this attempt was sent (each attempt has its own). Refuse a request whose timestamp is more than 5 minutes from your clock, in either direction: that stops replays.',
    schema: { type: 'string', pattern: '^[0-9]{1,12}$' },
  },
  {
    name: 'webhook-signature',
    description:
      'Standard Webhooks: space-separated `v1,<base64 HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{raw body}">` entries, same key as `X-Service-Signature` (the secret\'s UTF-8 bytes, never base64-decoded, even when it starts with `whsec_`). Accept when any entry matches (during a secret rotation overlap there is one per secret), compared in constant time.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$' },
  },
];

const responses = {
  '2XX': {
    description:
      'Accepted: any 2xx within 10 seconds ends the delivery (the body is read up to a cap and ignored). Answer fast and do the work afterwards; redirects are not followed.',
  },
  default: {
    description:
      'Any other answer, no answer within 10 seconds, or a connection/TLS error fails the attempt: it is retried 5 minutes, 30 minutes, 2 hours and 8 hours after each failure (5 attempts in all) with the same event id, then the delivery is permanently failed. Every attempt is in `GET /v1/webhooks/{id}/deliveries`.',
  },
};

const verify =
  'Verify a signature before parsing the body, deduplicate on the event id, answer 2xx fast (`examples/webhook-receivers` in the repository has Node, Python and Go receivers that do).';

function operation(kind: WebhookEventKind, schemaId: string, summary: string, sentTo: string) {
  return {
    post: {
      tags: ['Webhooks'],
      summary,
      description: `${sentTo}, as \`Content-Type: application/json\`. ${verify}`,
      operationId: `webhook${schemaId.replace(/^Webhook/, '')}`,
      security: [],
      parameters: headers(kind).map((header) => ({ in: 'header', required: true, ...header })),
      requestBody: { required: true, content: { 'application/json': { schema: ref(schemaId) } } },
      responses,
    },
  };
}

const subscribed = 'Sent to every HTTPS endpoint of the workspace subscribed to the event kind (one delivery per endpoint)';

/** The document's `webhooks` and the component schemas they reference. */
export function webhookDocs(): { webhooks: Record<string, unknown>; schemas: Record<string, unknown> } {
  return {
    webhooks: {
      'task.created': operation('task.created', 'WebhookTaskCreated', 'A task was created', subscribed),
      'task.updated': operation('task.updated', 'WebhookTaskUpdated', 'A task was updated', subscribed),
      'task.completed': operation('task.completed', 'WebhookTaskCompleted', 'A task was completed', subscribed),
      ping: operation('ping', 'WebhookPing', 'A test delivery', 'Sent by `POST /v1/webhooks/{id}/test` to that endpoint only, whatever its `events`'),
    },
    schemas: payloadSchemas(),
  };
}
