import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api, type ApiResponse } from '../support/api.js';
import { createProject, createTask, expectError, expectStatus, keyOf, unknownId } from '../support/fixtures.js';
import { requestFrom } from '../support/http-from.js';
import { waitForLogLines } from '../support/service-logs.js';
import { findOnTopic, registerWebhook } from '../support/webhooks/fixtures.js';
import { startReceiver } from '../support/webhooks/receiver.js';

/**
 * Request ids (docs/api.md "Request ids"): every response carries X-Request-Id, the client's when it
 * sent a sane one (1–128 characters of A–Z a–z 0–9 - _ . : / + = @), otherwise a new UUID; every
 * service that handled the request logs it as `reqId`.
 */
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const newId = (): string => `e2e-${randomUUID()}`;

function expectRequestId(response: ApiResponse, sent: string): void {
  expect(response.headers.get('x-request-id'), `${response.status} ${response.text}`).toBe(sent);
}

/** One raw HTTP/1.1 exchange, for header bytes fetch and node's client refuse to send. */
function rawRequest(head: string): Promise<string> {
  const { hostname, port } = new URL(inject('stack').gatewayUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) }, () => socket.write(head));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

describe('request ids', () => {
  let ws: TestWorkspace;
  beforeAll(async () => {
    ws = await createWorkspace();
  });

  it('a sane id the client sent comes back; without one the gateway makes a UUID, a new one each time', async () => {
    const sent = newId();
    const response = await api('GET', '/v1/workspace', { credentials: keyOf(ws), headers: { 'x-request-id': sent } });
    expectStatus(response, 200);
    expectRequestId(response, sent);

    const first = await api('GET', '/v1/workspace', { credentials: keyOf(ws) });
    const second = await api('GET', '/v1/workspace', { credentials: keyOf(ws) });
    expect(first.headers.get('x-request-id')).toMatch(uuid);
    expect(second.headers.get('x-request-id')).toMatch(uuid);
    expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
    // Every character of the safe set, at the longest length allowed.
    const longest = 'Az09-_.:/+=@'.repeat(11).slice(0, 128);
    expectRequestId(await api('GET', '/v1/workspace', { credentials: keyOf(ws), headers: { 'x-request-id': longest } }), longest);
  });

  it('an insane id (too long, spaces, quotes, tabs, non-ASCII) is replaced with a new UUID', async () => {
    for (const insane of ['x'.repeat(129), 'two words', 'a"quote', 'tab\there', 'semi;colon', '<b>']) {
      const response = await api('GET', '/v1/workspace', { credentials: keyOf(ws), headers: { 'x-request-id': insane } });
      expectStatus(response, 200);
      expect(response.headers.get('x-request-id'), JSON.stringify(insane)).toMatch(uuid);
    }
    // Bytes clients refuse to send: a control character and Latin-1 (node's parser takes both as header bytes).
    for (const value of ['evil\u0007bell', 'caf\u00e9', '\u001b[31mred']) {
      const answer = await rawRequest(`GET /v1/workspace HTTP/1.1\r\nHost: gateway\r\nX-API-Key: ${ws.apiKey.key}\r\nX-Request-Id: ${value}\r\nConnection: close\r\n\r\n`);
      const [status] = answer.match(/^HTTP\/1\.1 (\d{3})/)?.slice(1) ?? [];
      expect(['200', '400'], answer).toContain(status);
      const echoed = /\r\nx-request-id: ([^\r]*)\r\n/i.exec(answer)?.[1];
      expect(echoed, answer).toMatch(uuid);
    }
  });

  it('errors carry the id too, and their body stays exactly {"error": …}', async () => {
    const cases: Array<[number, (id: string) => Promise<ApiResponse>]> = [
      // Failed authentication from an address of its own: the per-IP limit of 127.0.0.1 stays untouched.
      [401, (id) => requestFrom('127.0.0.19', 'GET', '/v1/workspace', { headers: { 'x-request-id': id } })],
      [401, (id) => requestFrom('127.0.0.19', 'GET', '/v1/workspace', { headers: { 'x-request-id': id, 'x-api-key': 'tws_not-a-key' } })],
      [404, (id) => api('GET', `/v1/tasks/${unknownId()}`, { credentials: keyOf(ws), headers: { 'x-request-id': id } })],
      [404, (id) => api('GET', '/v1/no-such-route', { credentials: keyOf(ws), headers: { 'x-request-id': id } })],
      [400, (id) => api('POST', '/v1/projects', { credentials: keyOf(ws), rawBody: '{"name":', headers: { 'x-request-id': id, 'content-type': 'application/json' } })],
      [415, (id) => api('POST', '/v1/projects', { credentials: keyOf(ws), rawBody: 'name=x', headers: { 'x-request-id': id, 'content-type': 'text/plain' } })],
      // Refused before routing (fastify's frameworkErrors): a path parameter over maxParamLength.
      [414, (id) => api('GET', `/v1/tasks/${'a'.repeat(600)}`, { credentials: keyOf(ws), headers: { 'x-request-id': id } })],
    ];
    for (const [status, call] of cases) {
      const id = newId();
      const response = await call(id);
      expectError(response, status);
      expectRequestId(response, id);
    }
  });

  it('a 429 (failed authentication blocked per IP) carries the id and {"error"} only', async () => {
    const address = '127.0.0.18';
    let blocked: ApiResponse | undefined;
    let sent = '';
    for (let attempt = 0; attempt < 40 && !blocked; attempt++) {
      sent = newId();
      const response = await requestFrom(address, 'GET', '/v1/workspace', { headers: { 'x-api-key': `guess-${attempt}`, 'x-request-id': sent } });
      expectRequestId(response, sent);
      if (response.status === 429) blocked = response;
      else expectError(response, 401);
    }
    expect(blocked, 'blocked after 30 failed attempts').toBeDefined();
    expectError(blocked!, 429);
    expectRequestId(blocked!, sent);
  });

  it('the app (web) answers with request ids by the same rule', async (context) => {
    const { webUrl } = inject('stack');
    if (!webUrl) context.skip();
    const sent = newId();
    const kept = await fetch(`${webUrl}/`, { headers: { 'x-request-id': sent }, redirect: 'manual' });
    expect(kept.headers.get('x-request-id')).toBe(sent);
    const replaced = await fetch(`${webUrl}/`, { headers: { 'x-request-id': 'x'.repeat(129) }, redirect: 'manual' });
    expect(replaced.headers.get('x-request-id')).toMatch(uuid);
    // The authorization server's answers (oidc-provider writes the raw response itself) carry it too.
    const metadata = await fetch(`${webUrl}/.well-known/oauth-authorization-server`, { headers: { 'x-request-id': sent } });
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get('x-request-id')).toBe(sent);
  });

  it('the tasks, attachments and webhooks services log the id with the calls they handled for it', async () => {
    const project = await createProject(keyOf(ws));
    const task = await createTask(keyOf(ws), { projectId: project.id, listId: project.defaultListId });

    const created = newId();
    const createdResponse = await api('POST', '/v1/projects', { credentials: keyOf(ws), body: { name: `Traced ${created}` }, headers: { 'x-request-id': created } });
    expectStatus(createdResponse, 201);
    const missing = newId();
    expectError(await api('PATCH', `/v1/tasks/${unknownId()}`, { credentials: keyOf(ws), body: { name: 'x' }, headers: { 'x-request-id': missing } }), 404);
    const attachments = newId();
    expectStatus(await api('GET', `/v1/tasks/${task.id}/attachments`, { credentials: keyOf(ws), headers: { 'x-request-id': attachments } }), 200);
    const webhooks = newId();
    expectStatus(await api('GET', '/v1/webhooks', { credentials: keyOf(ws), headers: { 'x-request-id': webhooks } }), 200);

    const tasksLines = await waitForLogLines('tasks', (line) => line.reqId === created);
    expect(tasksLines).toContainEqual(expect.objectContaining({ service: 'tasks', reqId: created, method: 'CreateProject', code: 'OK' }));
    const notFound = await waitForLogLines('tasks', (line) => line.reqId === missing);
    expect(notFound).toContainEqual(expect.objectContaining({ method: 'UpdateTask', code: 'NOT_FOUND' }));

    const attachmentLines = await waitForLogLines('attachments', (line) => line.reqId === attachments);
    expect(attachmentLines).toContainEqual(expect.objectContaining({ service: 'attachments', method: 'ListTaskAttachments', code: 'OK' }));
    const webhookLines = await waitForLogLines('webhooks', (line) => line.reqId === webhooks);
    expect(webhookLines).toContainEqual(expect.objectContaining({ service: 'webhooks', method: 'ListEndpoints', code: 'OK' }));
  });

  it('the gateway writes an access line with the id, the route template and the credential kind, never the key', async () => {
    const sent = newId();
    const response = await api('PATCH', `/v1/tasks/${unknownId()}`, { credentials: keyOf(ws), body: { name: 'x' }, headers: { 'x-request-id': sent } });
    expectError(response, 404);
    const [line, ...more] = await waitForLogLines('gateway', (entry) => entry.reqId === sent && entry.msg === 'access');
    expect(more).toEqual([]);
    expect(line).toMatchObject({ service: 'gateway', method: 'PATCH', route: '/v1/tasks/:id', statusCode: 404, credential: 'apiKey', credentialId: ws.apiKey.id.slice(0, 8), workspaceId: ws.workspace.id });
    expect(JSON.stringify(line)).not.toContain(ws.apiKey.key);
  });
});

describe('request ids of webhook deliveries (task event → Kafka header → the delivery\'s log lines)', () => {
  it('the event carries the id of the request that changed the task, and each attempt, retries included, logs it', async () => {
    const ws = await createWorkspace();
    const project = await createProject(keyOf(ws));
    // The first request fails (500), so the delivery's second attempt comes from a delay topic.
    const receiver = await startReceiver({ reply: (n) => (n === 1 ? 500 : 200) });
    try {
      await registerWebhook(keyOf(ws), { url: `${receiver.origin}/hooks`, secret: `whsec_${randomUUID()}`, events: ['task.created'] });
      const sent = newId();
      const created = await api<{ id: string }>('POST', '/v1/tasks', {
        credentials: keyOf(ws),
        body: { projectId: project.id, listId: project.defaultListId, name: 'Traced task' },
        headers: { 'x-request-id': sent },
      });
      expectStatus(created, 201);
      expectRequestId(created, sent);

      const event = await findOnTopic('task-events.v1', (message) => message.key === created.body.id);
      expect(event.headers['request-id']).toBe(sent);
      await receiver.waitFor(2);
      const attempts = await waitForLogLines('webhooks', (line) => line.reqId === sent && line.msg === 'attempt succeeded');
      expect(attempts).toContainEqual(expect.objectContaining({ service: 'webhooks', attempt: 2, statusCode: 200 }));
      const failed = await waitForLogLines('webhooks', (line) => line.reqId === sent && line.msg === 'attempt failed');
      expect(failed).toContainEqual(expect.objectContaining({ attempt: 1, statusCode: 500 }));
    } finally {
      await receiver.close();
    }
  });
});
