import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, issueToken, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import { keyOf, TIMESTAMP } from '../support/fixtures.js';
import { setDnsRecord } from '@tws/devstack';
import { allEventKinds, registerWebhook, type Webhook } from '../support/webhooks/fixtures.js';

const { webhooks } = inject('stack');
const host = (name: string): string => `${name}.${webhooks.domain}`;

describe('webhook registration (POST/GET/DELETE /v1/webhooks)', () => {
  let workspace: TestWorkspace;
  let key: Credentials;

  beforeAll(async () => {
    workspace = await createWorkspace();
    key = keyOf(workspace);
    await setDnsRecord(webhooks.dnsControlUrl, host('private'), { a: ['10.0.0.7'] });
    await setDnsRecord(webhooks.dnsControlUrl, host('mixed'), { a: [webhooks.receiverAddress, '192.168.1.20'] });
    await setDnsRecord(webhooks.dnsControlUrl, host('metadata'), { a: ['169.254.169.254'] });
    await setDnsRecord(webhooks.dnsControlUrl, host('v6-loopback'), { aaaa: ['::1'] });
    await setDnsRecord(webhooks.dnsControlUrl, host('v6-mapped'), { aaaa: ['::ffff:127.0.0.1'] });
    await setDnsRecord(webhooks.dnsControlUrl, host('v6-ula'), { aaaa: ['fd00::1'] });
    await setDnsRecord(webhooks.dnsControlUrl, host('loopback'), { a: ['127.0.0.1'] });
    await setDnsRecord(webhooks.dnsControlUrl, host('nat64'), { aaaa: ['64:ff9b::a00:1'] });
  });

  afterAll(async () => {
    for (const name of ['private', 'mixed', 'metadata', 'v6-loopback', 'v6-mapped', 'v6-ula', 'loopback', 'nat64']) {
      await setDnsRecord(webhooks.dnsControlUrl, host(name), undefined);
    }
  });

  it('registers an https endpoint with an API key: 201 {id, url, events}, all three kinds when events is omitted', async () => {
    const url = `https://${host('hooks')}:8443/in?source=tws`;
    const response = await api<Webhook>('POST', '/v1/webhooks', { credentials: key, body: { url, secret: 's3cr3t' } });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(['events', 'id', 'url']);
    expect(response.body).toEqual({ id: expect.any(String), url, events: allEventKinds });
    expect(response.text).not.toContain('s3cr3t');
  });

  it('[] subscribes to all three; a subset is kept, in the contract order, without duplicates', async () => {
    const all = await registerWebhook(key, { url: `https://${host('all')}/`, secret: 'x', events: [] });
    expect(all.events).toEqual(allEventKinds);
    const some = await registerWebhook(key, {
      url: `https://${host('some')}/`,
      secret: 'x',
      events: ['task.completed', 'task.created', 'task.completed'],
    });
    expect(some.events).toEqual(['task.created', 'task.completed']);
  });

  it('lists endpoints with createdAt and never the secret; DELETE answers 204 and then 404', async () => {
    const other = await createWorkspace();
    const created = await registerWebhook(keyOf(other), { url: `https://${host('listed')}/hook`, secret: 'top-secret-value' });
    const listed = await api<Webhook[]>('GET', '/v1/webhooks', { credentials: keyOf(other) });
    expect(listed.status).toBe(200);
    // The contract's fields, plus the additive administration fields (issue #18).
    expect(listed.body).toEqual([
      { ...created, createdAt: expect.stringMatching(TIMESTAMP), enabled: true, disabledAt: null, disabledReason: null, previousSecretExpiresAt: null },
    ]);
    expect(listed.text).not.toContain('top-secret-value');
    expect(listed.text).not.toContain('secret');

    // Another workspace neither sees nor deletes it.
    const foreign = await api('DELETE', `/v1/webhooks/${created.id}`, { credentials: key });
    expect(foreign.status).toBe(404);
    expect((await api<Webhook[]>('GET', '/v1/webhooks', { credentials: key })).body.map((w) => w.id)).not.toContain(created.id);

    const deleted = await api('DELETE', `/v1/webhooks/${created.id}`, { credentials: keyOf(other) });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await api<Webhook[]>('GET', '/v1/webhooks', { credentials: keyOf(other) })).body).toEqual([]);
    expect((await api('DELETE', `/v1/webhooks/${created.id}`, { credentials: keyOf(other) })).status).toBe(404);
    expect((await api('DELETE', '/v1/webhooks/not-a-uuid', { credentials: keyOf(other) })).status).toBe(404);
  });

  it('is managed with an API key only: Bearer gets 403, no credentials 401', async () => {
    const token = await issueToken(workspace.workspace.id, workspace.owner.userId, 'read write');
    const bearer = { bearer: token, workspaceId: workspace.workspace.id };
    for (const [method, path, body] of [
      ['GET', '/v1/webhooks', undefined],
      ['POST', '/v1/webhooks', { url: `https://${host('bearer')}/`, secret: 'x' }],
      ['DELETE', '/v1/webhooks/00000000-0000-4000-8000-000000000000', undefined],
    ] as const) {
      const response = await api(method, path, { credentials: bearer, body });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body).toEqual({ error: 'webhooks are managed with an API key' });
    }
    expect((await api('GET', '/v1/webhooks')).status).toBe(401);
  });

  it.each([
    ['url missing', { secret: 'x' }],
    ['secret missing', { url: `https://${host('nosecret')}/` }],
    ['secret empty', { url: `https://${host('nosecret')}/`, secret: '' }],
    ['unknown event kind', { url: `https://${host('kinds')}/`, secret: 'x', events: ['task.deleted'] }],
    ['events not an array', { url: `https://${host('kinds')}/`, secret: 'x', events: 'task.created' }],
    ['not a URL', { url: 'hooks dot example', secret: 'x' }],
  ])('400 when %s', async (_case, body) => {
    const response = await api('POST', '/v1/webhooks', { credentials: key, body });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: expect.any(String) });
  });

  const refused: Array<[string, string, RegExp]> = [
    ['http', `http://${host('plain')}/hook`, /https/],
    ['localhost', 'https://localhost/hook', /localhost/],
    ['localhost with a port and trailing dot', 'https://localhost.:8443/hook', /localhost/],
    ['a *.localhost name', 'https://api.localhost/hook', /localhost/],
    ['10/8', 'https://10.1.2.3/hook', /disallowed address/],
    ['172.16/12', 'https://172.20.0.1/hook', /disallowed address/],
    ['192.168/16', 'https://192.168.0.10/hook', /disallowed address/],
    ['127.0.0.1', 'https://127.0.0.1/hook', /disallowed address/],
    ['127/8', 'https://127.1.2.3:8443/hook', /disallowed address/],
    ['169.254/16 (cloud metadata)', 'https://169.254.169.254/latest/meta-data', /disallowed address/],
    ['100.64/10 (CGNAT)', 'https://100.64.12.1/hook', /disallowed address/],
    ['0.0.0.0', 'https://0.0.0.0/hook', /disallowed address/],
    ['::1', 'https://[::1]/hook', /disallowed address/],
    ['fc00::/7', 'https://[fc00::1]/hook', /disallowed address/],
    ['fd00::/8', 'https://[fd12:3456::1]/hook', /disallowed address/],
    ['fe80::/10', 'https://[fe80::1]/hook', /disallowed address/],
    ['::ffff:127.0.0.1', 'https://[::ffff:127.0.0.1]/hook', /disallowed address/],
    ['::ffff:10.0.0.1', 'https://[::ffff:a00:1]/hook', /disallowed address/],
    ['NAT64 of 127.0.0.1', 'https://[64:ff9b::7f00:1]/hook', /disallowed address/],
    ['6to4 of 192.168.1.1', 'https://[2002:c0a8:101::1]/hook', /disallowed address/],
    ['decimal 127.0.0.1', 'https://2130706433/hook', /disallowed address/],
    ['hex 127.0.0.1', 'https://0x7f000001/hook', /disallowed address/],
    ['octal 127.0.0.1', 'https://0177.0.0.1/hook', /disallowed address/],
    ['short 127.1', 'https://127.1/hook', /disallowed address/],
    ['a name resolving to 10/8', `https://${host('private')}/hook`, /disallowed address/],
    ['a name resolving to a public-looking and a private address', `https://${host('mixed')}/hook`, /disallowed address/],
    ['a name resolving to 169.254.169.254', `https://${host('metadata')}/hook`, /disallowed address/],
    ['a name resolving to ::1', `https://${host('v6-loopback')}/hook`, /disallowed address/],
    ['a name resolving to ::ffff:127.0.0.1', `https://${host('v6-mapped')}/hook`, /disallowed address/],
    ['a name resolving to fd00::1', `https://${host('v6-ula')}/hook`, /disallowed address/],
    ['a name resolving to 127.0.0.1', `https://${host('loopback')}/hook`, /disallowed address/],
    ['a name resolving to NAT64 of 10.0.0.1', `https://${host('nat64')}/hook`, /disallowed address/],
    ['credentials in the URL', `https://user:pass@${host('creds')}/hook`, /credentials/],
  ];
  it.each(refused)('400 for %s', async (_case, url, message) => {
    const response = await api<{ error: string }>('POST', '/v1/webhooks', { credentials: key, body: { url, secret: 'x' } });
    expect(response.status, response.text).toBe(400);
    expect(response.body.error).toMatch(message);
  });

  it.each([
    ['a name resolving to 169.254.169.254', `https://${host('metadata')}/hook`, '169.254'],
    ['a name resolving to 10.0.0.7', `https://${host('private')}/hook`, '10.0.0.7'],
    ['a name resolving to ::1', `https://${host('v6-loopback')}/hook`, 'linkLocal|loopback|::1'],
  ])('400 for %s tells only that the address is not allowed (no address, no range)', async (_case, url, leak) => {
    const response = await api<{ error: string }>('POST', '/v1/webhooks', { credentials: key, body: { url, secret: 'x' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'url resolves to a disallowed address' });
    expect(response.text).not.toMatch(new RegExp(leak.replaceAll('.', '\\.')));
  });

  it('400 "host does not resolve" for a name without addresses', async () => {
    const response = await api('POST', '/v1/webhooks', {
      credentials: key,
      body: { url: 'https://nothing-here.nowhere.test/hook', secret: 'x' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'host does not resolve' });
  });

  it('counts refusals in webhook_ssrf_blocked_total', async () => {
    const ops = inject('stack').services.find((service) => service.name === 'webhooks')?.opsUrl;
    const metrics = await (await fetch(`${ops}/metrics`)).text();
    expect(metrics).toMatch(/webhook_ssrf_blocked_total\{stage="registration",service="webhooks"\} [1-9]/);
  });
});

describe('webhook routes in the OpenAPI document', () => {
  it('documents every webhook operation, API key only, with the secret write-only and absent from responses', async () => {
    const document = (await (await fetch(`${inject('stack').gatewayUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; security?: unknown; responses: Record<string, unknown>; requestBody?: unknown }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    for (const name of ['Webhook', 'CreatedWebhook', 'WebhookDelivery', 'WebhookDeliveryPage']) {
      expect(document.components.schemas[name], name).toBeDefined();
      expect(Object.keys(document.components.schemas[name]?.properties ?? {})).not.toContain('secret');
    }
    const operations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/v1/webhooks'))
      .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));
    expect(operations.map(({ operation }) => operation.operationId).sort()).toEqual([
      'createWebhook',
      'deleteWebhook',
      'listWebhookDeliveries',
      'listWebhooks',
      'redeliverWebhookDelivery',
      'rotateWebhookSecret',
      'testWebhook',
      'updateWebhook',
    ]);
    for (const { operation } of operations) {
      expect(operation.security).toEqual([{ apiKey: [] }]);
      expect(JSON.stringify(operation.responses)).not.toContain('secret');
    }
    const create = operations.find(({ operation }) => operation.operationId === 'createWebhook')?.operation;
    expect(JSON.stringify(create?.requestBody)).toContain('"secret"');
  });
});
