/**
 * Idempotency-Key through the real stack (issue #18 item 1): every POST /v1 route replays its first
 * answer (same status, same body, `Idempotent-Replayed: true`) and runs once; a retry after a lost
 * response creates one task and one task.created event; another body → 422 with nothing written;
 * of 10 concurrent requests with one key exactly one runs; keys are per workspace; answers expire
 * with the tasks service's TTL (a tasks replica with a short one); malformed keys → 400.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, issueToken, type TestWorkspace } from '../support/admin.js';
import { api, type ApiResponse, type Credentials } from '../support/api.js';
import { put } from '../support/attachments.js';
import { startExtraTasks, type ExtraTasks } from '../support/extra-tasks.js';
import { createProject, createTask, expectError, expectStatus, keyOf, listTasks, pollUntil, uniqueName, type CreatedProject } from '../support/fixtures.js';
import { startExtraGateway, type ExtraGateway } from '../support/second-gateway.js';

const { webhooks, databaseUrl, gatewayUrl } = inject('stack');

describe('Idempotency-Key', () => {
  let ws: TestWorkspace;
  let key: Credentials;
  let project: CreatedProject;
  let db: pg.Client;

  beforeAll(async () => {
    ws = await createWorkspace({ plan: 'pro' });
    key = keyOf(ws);
    project = await createProject(key);
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
  });
  afterAll(async () => db.end());

  const post = <T = unknown>(path: string, body: unknown, idempotencyKey: string | undefined, credentials = key): Promise<ApiResponse<T>> =>
    api<T>('POST', path, { credentials, body, ...(idempotencyKey === undefined ? {} : { headers: { 'idempotency-key': idempotencyKey } }) });
  const count = async (sql: string, params: unknown[]): Promise<number> => (await db.query<{ n: number }>(sql, params)).rows[0]!.n;
  const tasksNamed = async (name: string): Promise<number> => count('SELECT count(*)::int AS n FROM tasks.tasks WHERE workspace_id = $1 AND name = $2', [ws.workspace.id, name]);
  const createdEvents = async (taskId: string): Promise<number> =>
    count(`SELECT count(*)::int AS n FROM tasks.outbox WHERE aggregateid = $1 AND type = 'task.created'`, [taskId]);

  /** Sends the same request twice with one key: the second is the first's answer, replayed. */
  async function expectReplayed(path: string, body: unknown, status: number): Promise<ApiResponse> {
    const idempotencyKey = randomUUID();
    const first = await post(path, body, idempotencyKey);
    expectStatus(first, status);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post(path, body, idempotencyKey);
    expect({ status: again.status, text: again.text, type: again.headers.get('content-type') }).toEqual({
      status: first.status,
      text: first.text,
      type: first.headers.get('content-type'),
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    return first;
  }

  describe('every POST /v1 route replays its first answer and runs once', () => {
    it('POST /v1/projects', async () => {
      const name = uniqueName('Idem project');
      await expectReplayed('/v1/projects', { name }, 201);
      expect(await count('SELECT count(*)::int AS n FROM tasks.projects WHERE workspace_id = $1 AND name = $2', [ws.workspace.id, name])).toBe(1);
    });

    it('POST /v1/sections', async () => {
      const name = uniqueName('Idem section');
      await expectReplayed('/v1/sections', { projectId: project.id, name }, 201);
      expect(await count('SELECT count(*)::int AS n FROM tasks.sections WHERE workspace_id = $1 AND name = $2', [ws.workspace.id, name])).toBe(1);
    });

    it('POST /v1/tasks', async () => {
      const name = uniqueName('Idem task');
      const first = await expectReplayed('/v1/tasks', { projectId: project.id, listId: project.defaultListId, name }, 201);
      expect(await tasksNamed(name)).toBe(1);
      expect(await createdEvents((first.body as { id: string }).id)).toBe(1);
    });

    it('POST /v1/tasks/:id/comments', async () => {
      const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
      await expectReplayed(`/v1/tasks/${task.id}/comments`, { text: 'Once only' }, 201);
      expect(await count('SELECT count(*)::int AS n FROM tasks.comments WHERE task_id = $1', [task.id])).toBe(1);
    });

    it('POST /v1/attachments/upload and POST /v1/tasks/:id/attachments', async () => {
      const bytes = Buffer.from('idempotent file');
      const upload = await expectReplayed('/v1/attachments/upload', { contentType: 'text/plain', size: bytes.length }, 200);
      const { uploadUrl, attachmentId } = upload.body as { uploadUrl: string; attachmentId: string };
      expect((await put(uploadUrl, bytes, 'text/plain')).status).toBe(200);
      const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
      await expectReplayed(`/v1/tasks/${task.id}/attachments`, { attachmentId, name: 'a.txt', contentType: 'text/plain', size: bytes.length }, 201);
      const listed = await api<unknown[]>('GET', `/v1/tasks/${task.id}/attachments`, { credentials: key });
      expect(listed.body).toHaveLength(1);
    });

    it('POST /v1/webhooks', async () => {
      const url = `https://idem-${randomUUID()}.${webhooks.domain}/hook`;
      await expectReplayed('/v1/webhooks', { url, secret: 'idempotent-secret' }, 201);
      const listed = await api<Array<{ url: string }>>('GET', '/v1/webhooks', { credentials: key });
      expect(listed.body.filter((webhook) => webhook.url === url)).toHaveLength(1);
    });

    it('a 4xx outcome of the request is replayed too; with a Bearer token as with an API key', async () => {
      const token = await issueToken(ws.workspace.id, ws.owner.userId, 'read write');
      const bearer: Credentials = { bearer: token, workspaceId: ws.workspace.id };
      const idempotencyKey = randomUUID();
      const body = { projectId: project.id, listId: randomUUID(), name: 'Nowhere' };
      const first = await post('/v1/tasks', body, idempotencyKey, bearer);
      expectError(first, 400);
      const again = await post('/v1/tasks', body, idempotencyKey, bearer);
      expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([400, first.text, 'true']);
    });
  });

  it('a retried POST /v1/tasks after a lost response creates one task and one task.created event', async () => {
    const name = uniqueName('Lost response');
    const idempotencyKey = randomUUID();
    const body = JSON.stringify({ projectId: project.id, listId: project.defaultListId, name });
    // The first attempt: the whole request is sent and runs (its task is written), then the connection
    // drops before the client reads any answer. (Dropping it right after sending would race the server
    // reading the request: then nothing ran, and the retry is simply the first execution.)
    const url = new URL('/v1/tasks', gatewayUrl);
    const sent = httpRequest(url, {
      method: 'POST',
      headers: { 'x-api-key': ws.apiKey.key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'idempotency-key': idempotencyKey },
    });
    sent.on('error', () => undefined);
    sent.end(body);
    expect(await pollUntil(() => tasksNamed(name), (n) => n === 1, { timeoutMs: 10_000, intervalMs: 20 })).toBe(1);
    sent.destroy();
    // The client retries (waiting out 409 while the first attempt still runs) until it has an answer.
    let retried: ApiResponse<{ id: string; number: number }> | undefined;
    for (let attempt = 0; attempt < 20; attempt++) {
      retried = await post<{ id: string; number: number }>('/v1/tasks', JSON.parse(body), idempotencyKey);
      if (retried.status !== 409) break;
      expect(retried.headers.get('retry-after')).toBe('1');
      await sleep(1_000);
    }
    expectStatus(retried!, 201);
    // The first attempt ran (its answer was stored): the retry is its replay, not a second creation.
    expect(retried!.headers.get('idempotent-replayed')).toBe('true');
    expect(await tasksNamed(name)).toBe(1);
    expect(await createdEvents(retried!.body.id)).toBe(1);
    expect((await listTasks(key, project.id)).filter((task) => task.name === name)).toHaveLength(1);
  });

  it('the same key with another body, or on another route, is 422 and writes nothing', async () => {
    const idempotencyKey = randomUUID();
    const name = uniqueName('First body');
    expectStatus(await post('/v1/tasks', { projectId: project.id, listId: project.defaultListId, name }, idempotencyKey), 201);
    const otherName = uniqueName('Second body');
    expectError(await post('/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: otherName }, idempotencyKey), 422);
    expect(await tasksNamed(otherName)).toBe(0);
    const projectName = uniqueName('Other route');
    expectError(await post('/v1/projects', { name: projectName }, idempotencyKey), 422);
    expect(await count('SELECT count(*)::int AS n FROM tasks.projects WHERE workspace_id = $1 AND name = $2', [ws.workspace.id, projectName])).toBe(0);
    expect(await tasksNamed(name)).toBe(1);
  });

  it('of 10 concurrent requests with one key exactly one runs; the others get 409 + Retry-After: 1 or the replay', async () => {
    const name = uniqueName('Concurrent');
    const idempotencyKey = randomUUID();
    const body = { projectId: project.id, listId: project.defaultListId, name };
    const answers = await Promise.all(Array.from({ length: 10 }, () => api('POST', '/v1/tasks', { credentials: key, body, headers: { 'idempotency-key': idempotencyKey }, rateLimited: 'return' })));
    const ran = answers.filter((answer) => answer.status === 201 && answer.headers.get('idempotent-replayed') === null);
    expect(ran).toHaveLength(1);
    for (const answer of answers) {
      if (answer === ran[0]) continue;
      if (answer.status === 409) {
        expectError(answer, 409);
        expect(answer.headers.get('retry-after')).toBe('1');
      } else {
        expect([answer.status, answer.text, answer.headers.get('idempotent-replayed')]).toEqual([201, ran[0]!.text, 'true']);
      }
    }
    expect(await tasksNamed(name)).toBe(1);
  });

  it('keys are per workspace: another workspace sending the same key and body runs its own request', async () => {
    const other = await createWorkspace({ plan: 'pro' });
    const otherKey = keyOf(other);
    const idempotencyKey = `shared-${randomUUID()}`;
    const body = { name: 'Same name, same key' };
    const mine = await post<{ id: string }>('/v1/projects', body, idempotencyKey);
    const theirs = await post<{ id: string }>('/v1/projects', body, idempotencyKey, otherKey);
    expectStatus(mine, 201);
    expectStatus(theirs, 201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('malformed keys are 400 and nothing runs', async () => {
    const name = uniqueName('Bad key');
    for (const bad of ['', 'x'.repeat(256), 'has space', 'tab\tkey']) {
      expectError(await post('/v1/tasks', { projectId: project.id, listId: project.defaultListId, name }, bad), 400);
    }
    expect(await tasksNamed(name)).toBe(0);
    expectStatus(await post('/v1/tasks', { projectId: project.id, listId: project.defaultListId, name }, 'x'.repeat(255)), 201);
  });

  describe('expiry (a tasks replica with IDEMPOTENCY_KEY_TTL_MS=2000)', () => {
    let tasks: ExtraTasks;
    let gateway: ExtraGateway;

    beforeAll(async () => {
      tasks = await startExtraTasks(`idem-${process.pid}`, { IDEMPOTENCY_KEY_TTL_MS: '2000', IDEMPOTENCY_SWEEP_INTERVAL_MS: '500' });
      gateway = await startExtraGateway(`idem-${process.pid}`, { tasksGrpcTarget: tasks.grpcTarget });
    });
    afterAll(async () => {
      await gateway?.stop();
      await tasks?.stop();
    });

    it('an answer is replayed within the TTL; after it, the row is swept and the same key runs again', async () => {
      const idempotencyKey = randomUUID();
      const send = async (): Promise<Response> =>
        fetch(`${gateway.url}/v1/projects`, {
          method: 'POST',
          headers: { 'x-api-key': ws.apiKey.key, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
          body: JSON.stringify({ name: 'Expiring' }),
        });
      const first = await send();
      expect(first.status).toBe(201);
      const firstBody = (await first.json()) as { id: string };
      const replay = await send();
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(((await replay.json()) as { id: string }).id).toBe(firstBody.id);
      const rows = (): Promise<number> => count('SELECT count(*)::int AS n FROM tasks.idempotency_keys WHERE workspace_id = $1 AND key = $2', [ws.workspace.id, idempotencyKey]);
      expect(await rows()).toBe(1);
      expect(await pollUntil(rows, (n) => n === 0, { timeoutMs: 10_000, intervalMs: 200 })).toBe(0);
      const after = await send();
      expect(after.status).toBe(201);
      expect(after.headers.get('idempotent-replayed')).toBeNull();
      expect(((await after.json()) as { id: string }).id).not.toBe(firstBody.id);
    });
  });
});
