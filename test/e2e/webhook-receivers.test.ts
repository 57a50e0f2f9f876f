import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { createWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import { createProject, createTask, keyOf, type CreatedProject } from '../support/fixtures.js';
import { exampleLanguages, postTo, signedDelivery, startExample, type RunningExample } from '../support/webhooks/examples.js';
import { registerWebhook, waitForDeliveryLog, type Webhook } from '../support/webhooks/fixtures.js';

/**
 * The receiver examples of examples/webhook-receivers (Node, Python, Go), each run as a real
 * process: it accepts a real delivery of the webhooks service (registered through the gateway, for
 * a task created through the gateway) and a redelivery of it only once, and refuses what an
 * attacker could send: a tampered body, a stale or future timestamp, one signature style right and
 * the other wrong. The secret is non-ASCII, so a receiver keying with anything but its UTF-8 bytes fails.
 */
/** The payload schema the gateway's OpenAPI document gives for a webhook kind, as a validator. */
async function documentedPayload(kind: string): Promise<z.ZodType> {
  const document = (await (await fetch(`${inject('stack').gatewayUrl}/openapi.json`)).json()) as {
    webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }>;
    components: { schemas: Record<string, object> };
  };
  const target = document.webhooks[kind]?.post.requestBody.content['application/json']?.schema.$ref ?? '';
  const schema = document.components.schemas[target.replace('#/components/schemas/', '')];
  const standalone = JSON.stringify({ ...schema, $defs: document.components.schemas }).replaceAll('#/components/schemas/', '#/$defs/');
  return z.fromJSONSchema(JSON.parse(standalone) as Parameters<typeof z.fromJSONSchema>[0]);
}

describe.each(exampleLanguages)('the %s webhook receiver example', (language) => {
  const secret = `clé ✓ ${randomBytes(12).toString('hex')}`;
  let example: RunningExample;
  let key: Credentials;
  let project: CreatedProject;
  let webhook: Webhook;

  beforeAll(async () => {
    example = await startExample(language, secret);
    key = keyOf(await createWorkspace());
    project = await createProject(key);
    webhook = await registerWebhook(key, { url: `${example.origin}/hooks`, secret });
  });
  afterAll(async () => {
    await example?.stop();
  });

  it('accepts a real delivery (204, one line on stdout) and ignores its redelivery', async () => {
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: `Zoë's ${language} task` });
    const accepted = await example.waitForEvent((event) => event.data.id === task.id);
    expect(accepted).toMatchObject({ id: expect.stringMatching(/^evt_/), event: 'task.created', data: { id: task.id, number: task.number, name: `Zoë's ${language} task` } });
    // What arrived is what /openapi.json documents under webhooks → task.created.
    expect((await documentedPayload('task.created')).safeParse(accepted).error).toBeUndefined();
    const [delivery] = await waitForDeliveryLog(key, webhook.id, (log) => log[0]?.status === 'succeeded');
    expect(delivery).toMatchObject({ eventId: accepted.id, attempts: [{ outcome: 'succeeded', statusCode: 204 }] });

    // The same event again (same id, new timestamp and signature): verified, answered 204, not handled twice.
    const redelivered = await api('POST', `/v1/webhooks/${webhook.id}/deliveries/${delivery?.id}/redeliver`, { credentials: key });
    expect(redelivered.status).toBe(202);
    const log = await waitForDeliveryLog(key, webhook.id, (deliveries) => deliveries.length === 2 && deliveries.every((each) => each.status === 'succeeded'));
    expect(log.map((each) => each.attempts[0]?.statusCode)).toEqual([204, 204]);
    const sentinel = signedDelivery(secret);
    expect(await postTo(example, sentinel.body, sentinel.headers)).toBe(204);
    await example.waitForEvent((event) => event.id === sentinel.id);
    expect(example.accepted.filter((event) => event.id === accepted.id)).toHaveLength(1);
    expect(example.rejected).toEqual([]);
  });

  it('rejects a tampered body, a stale or future timestamp, and a request with only one valid signature style (401, nothing printed)', async () => {
    const before = example.accepted.length;
    const genuine = signedDelivery(secret);

    const tampered = Buffer.from(genuine.body.toString('utf8').replace('Zoë', 'Zoe'));
    expect(await postTo(example, tampered, genuine.headers)).toBe(401);
    const stale = signedDelivery(secret, { at: new Date(Date.now() - 6 * 60_000) });
    expect(await postTo(example, stale.body, stale.headers)).toBe(401);
    const future = signedDelivery(secret, { at: new Date(Date.now() + 6 * 60_000) });
    expect(await postTo(example, future.body, future.headers)).toBe(401);
    // A fresh timestamp put on a captured request: the standard signature covers it.
    const restamped = { ...stale.headers, 'webhook-timestamp': genuine.headers['webhook-timestamp'] };
    expect(await postTo(example, stale.body, restamped)).toBe(401);
    const otherSecret = signedDelivery(`${secret}x`);
    const onlyStandard = { ...genuine.headers, 'x-service-signature': otherSecret.headers['x-service-signature'] };
    expect(await postTo(example, genuine.body, onlyStandard)).toBe(401);
    const onlyContract = { ...genuine.headers, 'webhook-signature': signedDelivery(`${secret}x`).headers['webhook-signature'] };
    expect(await postTo(example, genuine.body, onlyContract)).toBe(401);
    // Not JSON and not signed: refused as unauthentic (verified before parsing), not as malformed.
    expect(await postTo(example, Buffer.from('{not json'), genuine.headers)).toBe(401);
    const rejected = await example.waitForRejections(7);
    expect(rejected.map((line) => line.status)).toEqual([401, 401, 401, 401, 401, 401, 401]);
    expect(rejected.map((line) => line.rejected)).toEqual([
      'bad X-Service-Signature',
      'webhook-timestamp too old',
      'webhook-timestamp too new',
      'bad webhook-signature',
      'bad X-Service-Signature',
      'bad webhook-signature',
      'bad X-Service-Signature',
    ]);

    // The genuine request itself passes, also when its signature is one of several entries (a rotation).
    const rotated = { ...genuine.headers, 'webhook-signature': `${otherSecret.headers['webhook-signature']} ${genuine.headers['webhook-signature']}` };
    expect(await postTo(example, genuine.body, rotated)).toBe(204);
    await example.waitForEvent((event) => event.id === genuine.id);
    expect(example.accepted.slice(before).map((event) => event.id)).toEqual([genuine.id]);
    expect(example.rejected).toHaveLength(7);
  });
});
