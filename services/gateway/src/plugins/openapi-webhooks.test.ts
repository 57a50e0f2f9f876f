import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { z } from 'zod';
import { exampleTaskEvent, pingEventSchema, taskEventSchema, webhookEventKinds } from '@tws/contracts';
import { startGateway, type Harness } from '../testing/harness.js';

interface Parameter {
  in: string;
  name: string;
  required: boolean;
  description: string;
  schema: Record<string, unknown>;
}
interface WebhookOperation {
  security: unknown[];
  parameters: Parameter[];
  requestBody: { required: boolean; content: Record<string, { schema: { $ref: string } }> };
  responses: Record<string, { description: string }>;
}
interface Spec {
  webhooks: Record<string, { post: WebhookOperation }>;
  components: { schemas: Record<string, Record<string, unknown>> };
  paths: Record<string, unknown>;
}

let h: Harness;
let spec: Spec;
beforeAll(async () => {
  h = await startGateway();
  spec = (await h.app.inject({ url: '/openapi.json' })).json();
  // OPENAPI_DUMP=file: a copy for an external validator (e.g. `openapi-spec-validator file`).
  if (process.env.OPENAPI_DUMP) writeFileSync(process.env.OPENAPI_DUMP, JSON.stringify(spec, null, 1));
});
afterAll(async () => h.close());

const schemaOf = (kind: string) => {
  const target = spec.webhooks[kind]?.post.requestBody.content['application/json']?.schema.$ref ?? '';
  return spec.components.schemas[target.replace('#/components/schemas/', '')];
};

/** A payload schema of the document back as zod (its component refs resolved), to check what it accepts. */
const validatorOf = (kind: string) => {
  const standalone = JSON.stringify({ ...schemaOf(kind), $defs: spec.components.schemas }).replaceAll('#/components/schemas/', '#/$defs/');
  return z.fromJSONSchema(JSON.parse(standalone) as Parameters<typeof z.fromJSONSchema>[0]);
};

// A task.created event with no status (null is allowed) and a short label id.
const task = {
  ...exampleTaskEvent,
  event: 'task.created',
  data: { ...exampleTaskEvent.data, statusId: null, labels: [{ id: 'l1', name: 'bug', color: '#FF0000' }] },
};

test('the webhooks section has the three task events and ping, each a POST with its payload schema', () => {
  expect(Object.keys(spec.webhooks).sort()).toEqual([...webhookEventKinds].sort());
  for (const kind of webhookEventKinds) {
    const operation = spec.webhooks[kind]?.post;
    expect(operation?.requestBody.required, kind).toBe(true);
    expect(operation?.security, kind).toEqual([]);
    expect(Object.keys(operation?.responses ?? {}), kind).toEqual(['2XX', 'default']);
    expect(operation?.responses['2XX']?.description).toContain('10 seconds');
    const schema = schemaOf(kind);
    expect(schema, kind).toMatchObject({ type: 'object', required: ['id', 'event', 'createdAt', 'data'], properties: { event: { const: kind } } });
    // A component, not a standalone document; open to additive fields.
    expect(JSON.stringify(schema)).not.toMatch(/"\$schema"|"\$id"|"additionalProperties":false/);
    expect(schema, kind).toMatchObject({ description: expect.stringContaining('ignore fields they do not know'), examples: [{ event: kind }] });
  }
  expect(spec.components.schemas.WebhookTaskSnapshot).toMatchObject({
    required: ['id', 'number', 'name', 'isCompleted', 'listId', 'projectId', 'assigneeId', 'statusId', 'labels', 'createdAt'],
    properties: { labels: { items: { $ref: '#/components/schemas/WebhookTaskLabel' } }, assigneeId: { type: ['string', 'null'] } },
  });
  expect(spec.components.schemas.WebhookTaskSnapshot?.properties).not.toHaveProperty('description');
  expect(spec.components.schemas.WebhookPing).toMatchObject({ properties: { data: { required: ['webhookId'] } } });
});

test('every delivery documents the contract and the Standard Webhooks headers, all required', () => {
  const names = ['X-Service-Event', 'X-Service-Delivery', 'X-Service-Signature', 'User-Agent', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];
  for (const kind of webhookEventKinds) {
    const parameters = spec.webhooks[kind]?.post.parameters ?? [];
    expect(parameters.map((parameter) => parameter.name)).toEqual(names);
    for (const parameter of parameters) {
      expect(parameter, `${kind} ${parameter.name}`).toMatchObject({ in: 'header', required: true, description: expect.any(String) });
    }
    expect(parameters[0]?.schema).toEqual({ type: 'string', const: kind });
  }
  const [, , signature, userAgent, , , standard] = spec.webhooks['task.created']?.post.parameters ?? [];
  expect(userAgent?.schema.const).toBe('Service-Webhook/1.0');
  expect(new RegExp(String(signature?.schema.pattern)).test(`sha256=${'ab'.repeat(32)}`)).toBe(true);
  const entry = `v1,${Buffer.alloc(32, 7).toString('base64')}`;
  const pattern = new RegExp(String(standard?.schema.pattern));
  expect([entry, `${entry} ${entry}`].every((value) => pattern.test(value))).toBe(true);
  expect(pattern.test(`v1a,${entry.slice(3)}`)).toBe(false);
});

test('the documented payloads are the contract writer schemas: a real event passes, a broken one does not', () => {
  const created = validatorOf('task.created');
  expect(taskEventSchema.parse(task)).toEqual(task);
  expect(created.safeParse(task).success).toBe(true);
  expect(created.safeParse({ ...task, event: 'task.updated' }).success).toBe(false);
  expect(created.safeParse({ ...task, id: 'evt_1' }).success).toBe(false);
  expect(created.safeParse({ ...task, data: { ...task.data, assigneeId: undefined } }).success).toBe(false);
  expect(created.safeParse({ ...task, data: { ...task.data, labels: [{ id: 'l1' }] } }).success).toBe(false);
  const ping = { id: task.id, event: 'ping', createdAt: task.createdAt, data: { webhookId: 'w1' } };
  expect(pingEventSchema.parse(ping)).toEqual(ping);
  const pingSchema = validatorOf('ping');
  expect(pingSchema.safeParse(ping).success).toBe(true);
  expect(pingSchema.safeParse({ ...ping, data: {} }).success).toBe(false);
  // The documented examples are what the writers accept.
  for (const kind of webhookEventKinds) {
    const [documented] = (schemaOf(kind)?.examples ?? []) as unknown[];
    expect((kind === 'ping' ? pingEventSchema : taskEventSchema).safeParse(documented).success, kind).toBe(true);
    expect(validatorOf(kind).safeParse(documented).success, kind).toBe(true);
  }
});

test('the secret of a registration names both signature styles', () => {
  const body = JSON.stringify(spec.paths['/v1/webhooks']);
  expect(body).toContain('X-Service-Signature');
  expect(body).toContain('webhook-signature');
});
