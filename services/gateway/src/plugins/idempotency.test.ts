import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { call, fakeCredentials, ids, RpcFailure, signToken, startGateway, validApiKey, type Harness } from '../testing/harness.js';

/**
 * The plugin's decisions against a fake tasks service whose IdempotencyService keeps keys in a Map,
 * as the real one keeps them in Postgres (its SQL is covered end to end: test/e2e/api-idempotency).
 */
describe('Idempotency-Key in the gateway', () => {
  let h: Harness;
  const store = new Map<string, { fingerprint: string; claimToken?: string; response?: Record<string, unknown> }>();
  let inProgress = false;

  beforeAll(async () => {
    h = await startGateway();
    fakeCredentials(h.fake);
    h.fake.handlers.set('BeginIdempotentRequest', (request) => {
      if (inProgress) return { outcome: 'IDEMPOTENCY_OUTCOME_IN_PROGRESS' };
      const id = `${String(request.workspaceId)}/${String(request.key)}`;
      const fingerprint = (request.fingerprint as Buffer).toString('hex');
      const row = store.get(id);
      if (!row) {
        const claimToken = `claim-${store.size}`;
        store.set(id, { fingerprint, claimToken });
        return { outcome: 'IDEMPOTENCY_OUTCOME_PROCEED', claimToken };
      }
      if (row.fingerprint !== fingerprint) return { outcome: 'IDEMPOTENCY_OUTCOME_MISMATCH' };
      return row.response ? { outcome: 'IDEMPOTENCY_OUTCOME_REPLAY', response: row.response } : { outcome: 'IDEMPOTENCY_OUTCOME_IN_PROGRESS' };
    });
    h.fake.handlers.set('CompleteIdempotentRequest', (request) => {
      const row = store.get(`${String(request.workspaceId)}/${String(request.key)}`);
      if (!row || row.claimToken !== request.claimToken) return { stored: false };
      row.response = request.response as Record<string, unknown>;
      delete row.claimToken;
      return { stored: true };
    });
    h.fake.handlers.set('ReleaseIdempotentRequest', (request) => {
      const id = `${String(request.workspaceId)}/${String(request.key)}`;
      if (store.get(id)?.claimToken === request.claimToken) store.delete(id);
      return {};
    });
    let created = 0;
    h.fake.handlers.set('CreateProject', () => ({ id: `${ids.project.slice(0, -2)}${String(++created).padStart(2, '0')}`, defaultListId: ids.section }));
  });
  afterAll(async () => h.close());
  beforeEach(() => {
    store.clear();
    inProgress = false;
    h.fake.calls.length = 0;
  });

  const post = (key: string | undefined, body: unknown, extra: { bearer?: string } = {}) =>
    call(h.app, 'POST', '/v1/projects', {
      ...(extra.bearer ? { bearer: extra.bearer, workspaceId: ids.workspace } : { apiKey: validApiKey }),
      body,
      ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
    });
  const creates = (): number => h.fake.callsOf('CreateProject').length;

  test('without the header nothing is claimed or stored', async () => {
    expect((await post(undefined, { name: 'A' })).status).toBe(201);
    expect((await post(undefined, { name: 'A' })).status).toBe(201);
    expect(creates()).toBe(2);
    expect(h.fake.calls.filter((c) => c.method.includes('Idempotent'))).toHaveLength(0);
  });

  test('the first answer is stored and replayed byte for byte with Idempotent-Replayed: true', async () => {
    const first = await post('k-1', { name: 'A' });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const [complete] = h.fake.callsOf('CompleteIdempotentRequest');
    expect(complete).toMatchObject({ workspaceId: ids.workspace, key: 'k-1', response: { statusCode: 201, contentType: 'application/json; charset=utf-8' } });
    const again = await post('k-1', { name: 'A' });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(creates()).toBe(1);
  });

  test('the same key with another body is 422 and runs nothing', async () => {
    await post('k-2', { name: 'A' });
    const other = await post('k-2', { name: 'B' });
    expect(other.status).toBe(422);
    expect(other.json).toEqual({ error: expect.stringContaining('Idempotency-Key') });
    expect(creates()).toBe(1);
  });

  test('the same key from another credential of the workspace is another request (422)', async () => {
    await post('k-3', { name: 'A' });
    const token = await signToken(h.key, { sub: ids.user, scope: 'write' });
    expect((await post('k-3', { name: 'A' }, { bearer: token })).status).toBe(422);
  });

  test('a key whose first request still runs: 409 with Retry-After: 1, nothing run', async () => {
    inProgress = true;
    const busy = await post('k-4', { name: 'A' });
    expect(busy.status).toBe(409);
    expect(busy.headers['retry-after']).toBe('1');
    expect(Object.keys(busy.json as object)).toEqual(['error']);
    expect(creates()).toBe(0);
  });

  test('malformed keys are 400 before anything runs', async () => {
    for (const key of ['x'.repeat(256), 'has space', 'é']) {
      const refused = await call(h.app, 'POST', '/v1/projects', { apiKey: validApiKey, body: { name: 'A' }, headers: { 'idempotency-key': Buffer.from(key).toString('latin1') } });
      expect(refused.status, key).toBe(400);
      expect(refused.json).toEqual({ error: 'Idempotency-Key header must be 1-255 visible ASCII characters' });
    }
    expect(creates()).toBe(0);
    expect(h.fake.callsOf('BeginIdempotentRequest')).toHaveLength(0);
  });

  test('a 5xx releases the key (a retry runs again); a 4xx outcome is stored', async () => {
    h.fake.handlers.set('CreateProject', () => {
      throw new RpcFailure(grpc.status.UNAVAILABLE, 'database unavailable');
    });
    expect((await post('k-5', { name: 'A' })).status).toBe(503);
    expect(h.fake.callsOf('ReleaseIdempotentRequest')).toHaveLength(1);
    expect(h.fake.callsOf('CompleteIdempotentRequest')).toHaveLength(0);
    h.fake.handlers.set('CreateProject', () => {
      throw new RpcFailure(grpc.status.PERMISSION_DENIED, 'free plan limit reached: 3 projects');
    });
    const limited = await post('k-5', { name: 'A' });
    expect(limited.status).toBe(403);
    h.fake.handlers.set('CreateProject', () => ({ id: ids.project, defaultListId: ids.section }));
    const replayed = await post('k-5', { name: 'A' });
    expect(replayed.status).toBe(403);
    expect(replayed.text).toBe(limited.text);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
  });

  test('a body that fails validation is 400 and claims nothing', async () => {
    expect((await post('k-6', { name: '' })).status).toBe(400);
    expect(h.fake.callsOf('BeginIdempotentRequest')).toHaveLength(0);
  });

  test('the idempotency store unavailable: 503 and the request does not run', async () => {
    const begin = h.fake.handlers.get('BeginIdempotentRequest')!;
    h.fake.handlers.set('BeginIdempotentRequest', () => {
      throw new RpcFailure(grpc.status.UNAVAILABLE, 'database unavailable');
    });
    try {
      expect((await post('k-7', { name: 'A' })).status).toBe(503);
      expect(creates()).toBe(0);
    } finally {
      h.fake.handlers.set('BeginIdempotentRequest', begin);
    }
  });

  test('GET and PATCH ignore the header', async () => {
    h.fake.handlers.set('ListProjects', () => ({ projects: [] }));
    const listed = await call(h.app, 'GET', '/v1/projects', { apiKey: validApiKey, headers: { 'idempotency-key': 'has space' } });
    expect(listed.status).toBe(200);
    expect(h.fake.callsOf('BeginIdempotentRequest')).toHaveLength(0);
  });
});

describe('Idempotency-Key in /openapi.json', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startGateway();
  });
  afterAll(async () => h.close());

  test('every POST of /v1 documents the header, the replay header on 2xx, 409 with Retry-After and 422; GETs do not', async () => {
    type Operation = { parameters?: Array<{ name: string; in: string }>; responses: Record<string, { headers?: Record<string, unknown> }> };
    const document = (await call(h.app, 'GET', '/openapi.json')).json as { paths: Record<string, Record<string, Operation>> };
    const posts = Object.entries(document.paths).flatMap(([path, item]) => (item.post && path.startsWith('/v1/') ? [[path, item.post] as const] : []));
    const covered = ['/v1/attachments/upload', '/v1/projects', '/v1/sections', '/v1/tasks', '/v1/tasks/{id}/attachments', '/v1/tasks/{id}/comments', '/v1/webhooks'];
    expect(posts.map(([path]) => path)).toEqual(expect.arrayContaining(covered));
    for (const [path, operation] of posts) {
      expect(operation.parameters?.some((parameter) => parameter.name === 'Idempotency-Key' && parameter.in === 'header'), path).toBe(true);
      const success = Object.entries(operation.responses).find(([code]) => code.startsWith('2'));
      expect(success?.[1].headers, path).toHaveProperty('Idempotent-Replayed');
      expect(operation.responses['409']?.headers, path).toHaveProperty('Retry-After');
      expect(operation.responses, path).toHaveProperty('422');
    }
    expect(document.paths['/v1/projects']?.get?.parameters?.some((parameter) => parameter.name === 'Idempotency-Key')).toBe(false);
  });
});
