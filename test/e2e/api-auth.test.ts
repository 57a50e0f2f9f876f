import { decodeJwt } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { localStack } from '@tws/devstack';
import { adminCli, createWorkspace, issueToken, type TestWorkspace } from '../support/admin.js';
import { api, type ApiResponse, type Credentials } from '../support/api.js';
import {
  addMember,
  createApiKey,
  createComment,
  createProject,
  createSection,
  createTask,
  expectError,
  expectStatus,
  getTask,
  keyOf,
  listProjects,
  listSections,
  listTasks,
  pollUntil,
  unknownId,
  type CreatedProject,
  type CreatedTask,
  type Member,
} from '../support/fixtures.js';
import { hs256WithPublicKey, otherPrivateKey, signToken, unsignedToken, withPayload, type TokenClaims } from '../support/jwt.js';

describe('authentication and authorization', () => {
  let ws: TestWorkspace;
  let other: TestWorkspace;
  let key: Credentials;
  let member: Member;
  let guest: Member;
  let project: CreatedProject;
  let sectionId: string;
  let task: CreatedTask;

  const bearer = (token: string, workspaceId = ws.workspace.id): Credentials => ({ bearer: token, workspaceId });

  /** Everything a write could change, read with the API key. */
  const snapshot = async () => ({
    projects: await listProjects(key),
    sections: await listSections(key, project.id),
    tasks: await listTasks(key, project.id),
    task: await getTask(key, task.id),
  });

  beforeAll(async () => {
    ws = await createWorkspace({ plan: 'pro' });
    other = await createWorkspace({ plan: 'pro' });
    key = keyOf(ws);
    member = await addMember(ws.workspace.id, 'member');
    guest = await addMember(ws.workspace.id, 'guest');
    project = await createProject(key);
    sectionId = (await createSection(key, project.id, 'Second')).id;
    task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
  });

  describe('API keys', () => {
    it.each([
      ['GET', '/v1/workspace', undefined],
      ['POST', '/v1/projects', { name: 'Anonymous' }],
      ['DELETE', '/v1/tasks/:task', undefined],
    ] as const)('%s %s without credentials answers 401 and changes nothing', async (method, path, body) => {
      const before = await snapshot();
      expectError(await api(method, path.replace(':task', task.id), { body }), 401);
      expect(await snapshot()).toStrictEqual(before);
    });

    it('an unknown API key answers 401', async () => {
      expectError(await api('GET', '/v1/workspace', { credentials: { apiKey: `${ws.apiKey.key.slice(0, -4)}zzzz` } }), 401);
      expectError(await api('GET', '/v1/workspace', { credentials: { apiKey: 'not-a-key' } }), 401);
    });

    it('API keys have a recognisable prefix and at least 32 random base62 characters', async () => {
      const format = /^([A-Za-z][A-Za-z0-9]*[_-])([A-Za-z0-9]{32,})$/;
      const another = await createApiKey(ws.workspace.id, ws.owner.userId, 'Second key');
      expect(another).toStrictEqual({ id: expect.any(String), name: 'Second key', key: expect.stringMatching(format) });
      expect(ws.apiKey.key).toMatch(format);
      expect(format.exec(another.key)![1]).toBe(format.exec(ws.apiKey.key)![1]);
      expect(another.key).not.toBe(ws.apiKey.key);
      expect(another.id).not.toBe(ws.apiKey.id);
    });

    it("a member's API key has full read and write access", async () => {
      const memberKey: Credentials = { apiKey: (await createApiKey(ws.workspace.id, member.userId)).key };
      const workspace = await api('GET', '/v1/workspace', { credentials: memberKey });
      expectStatus(workspace, 200);
      expect(workspace.body).toStrictEqual(ws.workspace);
      const created = await api('POST', '/v1/tasks', {
        credentials: memberKey,
        body: { projectId: project.id, listId: project.defaultListId, name: 'By a member key' },
      });
      expectStatus(created, 201);
    });

    it('a revoked API key answers 401 (within the auth cache time) while other keys keep working', async () => {
      const revoked = await createApiKey(ws.workspace.id, ws.owner.userId);
      const credentials: Credentials = { apiKey: revoked.key };
      expectStatus(await api('GET', '/v1/workspace', { credentials }), 200);

      const result = await adminCli(['apikey', 'revoke', '--workspace', ws.workspace.id, '--id', revoked.id]);
      expect(result.code, JSON.stringify(result.json) + result.stderr).toBe(0);

      const last = await pollUntil(
        () => api('GET', '/v1/workspace', { credentials }),
        (response) => response.status !== 200,
        { timeoutMs: 10_000, intervalMs: 250 },
      );
      expectError(last, 401);
      expectStatus(await api('GET', '/v1/workspace', { credentials: key }), 200);
    });

    it('guests cannot get an API key: the admin CLI refuses with {"error"}', async () => {
      const result = await adminCli(['apikey', 'create', '--workspace', ws.workspace.id, '--user', guest.userId, '--name', 'Guest key']);
      expect(result.code).not.toBe(0);
      expect(result.json).toStrictEqual({ error: expect.stringMatching(/\S/) });
    });
  });

  describe('Bearer tokens', () => {
    let readToken: string;
    let writeToken: string;

    beforeAll(async () => {
      readToken = await issueToken(ws.workspace.id, ws.owner.userId, 'read');
      writeToken = await issueToken(ws.workspace.id, ws.owner.userId, 'read write');
    });

    const reads = [
      '/v1/workspace',
      '/v1/members',
      '/v1/statuses',
      '/v1/projects',
      '/v1/projects/:project/sections',
      '/v1/projects/:project/tasks',
      '/v1/tasks/:task',
    ];
    const resolve = (path: string): string => path.replace(':project', project.id).replace(':task', task.id);

    it.each(reads)('a read token may GET %s and sees what the API key sees', async (path) => {
      const viaToken = await api('GET', resolve(path), { credentials: bearer(readToken) });
      expectStatus(viaToken, 200);
      const viaKey = await api('GET', resolve(path), { credentials: key });
      expect(viaToken.body).toStrictEqual(viaKey.body);
    });

    const writes: Array<[string, string, () => unknown]> = [
      ['POST', '/v1/projects', () => ({ name: 'Read-only attempt' })],
      ['PATCH', '/v1/projects/:project', () => ({ name: 'Read-only attempt' })],
      ['POST', '/v1/sections', () => ({ projectId: project.id, name: 'Read-only attempt' })],
      ['PATCH', '/v1/sections/:section', () => ({ name: 'Read-only attempt' })],
      ['POST', '/v1/tasks', () => ({ projectId: project.id, listId: project.defaultListId, name: 'Read-only attempt' })],
      ['PATCH', '/v1/tasks/:task', () => ({ isCompleted: true })],
      ['DELETE', '/v1/tasks/:task', () => undefined],
      ['POST', '/v1/tasks/:task/comments', () => ({ text: 'Read-only attempt' })],
    ];

    it.each(writes)('a read token may not %s %s: 403 and nothing changes', async (method, path, body) => {
      const before = await snapshot();
      const response = await api(method, resolve(path).replace(':section', sectionId), { credentials: bearer(readToken), body: body() });
      expectError(response, 403);
      expect(await snapshot()).toStrictEqual(before);
    });

    it('a read token may not DELETE /v1/comments/:id: 403 and the comment stays', async () => {
      const comment = await createComment(key, task.id);
      expectError(await api('DELETE', `/v1/comments/${comment.id}`, { credentials: bearer(readToken) }), 403);
      expectStatus(await api('DELETE', `/v1/comments/${comment.id}`, { credentials: key }), 204);
    });

    it('a "read write" token may use every method', async () => {
      const credentials = bearer(writeToken);
      const created = await api<CreatedProject>('POST', '/v1/projects', { credentials, body: { name: 'By token' } });
      expectStatus(created, 201);
      const projectId = created.body.id;
      expectStatus(await api('PATCH', `/v1/projects/${projectId}`, { credentials, body: { description: 'set by token' } }), 200);
      const section = await api<{ id: string }>('POST', '/v1/sections', { credentials, body: { projectId, name: 'Token section' } });
      expectStatus(section, 201);
      expectStatus(await api('PATCH', `/v1/sections/${section.body.id}`, { credentials, body: { name: 'Renamed by token' } }), 200);
      const newTask = await api<CreatedTask>('POST', '/v1/tasks', {
        credentials,
        body: { projectId, listId: created.body.defaultListId, name: 'Token task' },
      });
      expectStatus(newTask, 201);
      expectStatus(await api('PATCH', `/v1/tasks/${newTask.body.id}`, { credentials, body: { listId: section.body.id } }), 200);
      const comment = await api<{ id: string }>('POST', `/v1/tasks/${newTask.body.id}/comments`, { credentials, body: { text: 'hi' } });
      expectStatus(comment, 201);
      expectStatus(await api('DELETE', `/v1/comments/${comment.body.id}`, { credentials }), 204);
      expectStatus(await api('DELETE', `/v1/tasks/${newTask.body.id}`, { credentials }), 204);

      expect((await listProjects(key)).find((p) => p.id === projectId)).toStrictEqual({
        id: projectId,
        name: 'By token',
        description: 'set by token',
        taskPrefix: expect.any(String),
      });
      expect(await listTasks(key, projectId)).toStrictEqual([]);
    });

    it('a "write" token also reads (write implies read)', async () => {
      const token = await issueToken(ws.workspace.id, member.userId, 'write');
      expectStatus(await api('GET', '/v1/projects', { credentials: bearer(token) }), 200);
      expectStatus(
        await api('POST', '/v1/tasks', {
          credentials: bearer(token),
          body: { projectId: project.id, listId: project.defaultListId, name: 'Write scope' },
        }),
        201,
      );
    });

    it('a guest can read with a token', async () => {
      const token = await issueToken(ws.workspace.id, guest.userId, 'read');
      for (const path of reads) expectStatus(await api('GET', resolve(path), { credentials: bearer(token) }), 200);
    });

    it('a user of another workspace gets 403, in both directions', async () => {
      const outsider = await issueToken(other.workspace.id, other.owner.userId, 'read write');
      expectError(await api('GET', '/v1/workspace', { credentials: bearer(outsider, ws.workspace.id) }), 403);
      const insider = await issueToken(ws.workspace.id, ws.owner.userId, 'read write');
      expectError(await api('GET', '/v1/workspace', { credentials: bearer(insider, other.workspace.id) }), 403);
      expectError(await api('POST', '/v1/projects', { credentials: bearer(insider, other.workspace.id), body: { name: 'Intruder' } }), 403);
      expect((await listProjects(keyOf(other))).map((p) => p.name)).not.toContain('Intruder');
    });

    it('a Bearer token without X-Workspace-Id answers 400 or 401 with the error shape', async () => {
      const response = await api('GET', '/v1/workspace', { headers: { authorization: `Bearer ${readToken}` } });
      expect([400, 401]).toContain(response.status);
      expectError(response, response.status);
    });

    describe('hand-made tokens', () => {
      let claims: TokenClaims;

      beforeAll(() => {
        // The claims the admin CLI puts in a token, without its times (signToken sets fresh ones).
        const { iat: _iat, exp: _exp, nbf: _nbf, jti: _jti, ...rest } = decodeJwt(writeToken);
        claims = rest;
        expect(claims).toMatchObject({
          sub: ws.owner.userId,
          iss: localStack.devJwtIssuer,
          aud: expect.anything() as unknown,
          scope: 'read write',
        });
      });

      it('a correctly signed token with the trusted issuer and audience is accepted (so the refusals below mean something)', async () => {
        const response = await api('GET', '/v1/workspace', { credentials: bearer(await signToken(claims)) });
        expectStatus(response, 200);
        expect(response.body).toStrictEqual(ws.workspace);
      });

      it('the scope claim decides: a hand-made read token may GET but not POST', async () => {
        const token = await signToken({ ...claims, scope: 'read' });
        expectStatus(await api('GET', '/v1/projects', { credentials: bearer(token) }), 200);
        expectError(await api('POST', '/v1/projects', { credentials: bearer(token), body: { name: 'no' } }), 403);
      });

      it('a validly signed token of a user who is in no workspace answers 403', async () => {
        expectError(await api('GET', '/v1/workspace', { credentials: bearer(await signToken({ ...claims, sub: unknownId() })) }), 403);
      });

      const now = () => Math.floor(Date.now() / 1000);
      const hostile: Array<[string, () => Promise<string> | string]> = [
        ['expired', () => signToken({ ...claims, iat: now() - 7200, exp: now() - 3600 })],
        ['not valid before a future time', () => signToken({ ...claims, nbf: now() + 3600 })],
        ['from another issuer', () => signToken({ ...claims, iss: 'https://evil.example' })],
        ['for another audience', () => signToken({ ...claims, aud: 'another-api' })],
        ['without sub', () => signToken(claims, { omit: ['sub'] })],
        ['unsigned (alg none)', () => unsignedToken(claims)],
        ['HS256-signed with the public key', () => hs256WithPublicKey(claims)],
        ['signed by another key', () => signToken(claims, { key: otherPrivateKey() })],
        ['altered after signing', async () => withPayload(await signToken({ ...claims, scope: 'read' }), { scope: 'read write' })],
        ['not a JWT at all', () => 'not.a.jwt'],
      ];

      it.each(hostile)('a token %s answers 401', async (_label, make) => {
        const response: ApiResponse = await api('GET', '/v1/workspace', { credentials: bearer(await make()) });
        expectError(response, 401);
      });
    });
  });
});
