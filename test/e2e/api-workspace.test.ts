import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, issueToken, type TestWorkspace } from '../support/admin.js';
import { api } from '../support/api.js';
import {
  addMember,
  createProject,
  createTask,
  expectStatus,
  getTask,
  keyOf,
  uniqueName,
  type Member,
  type Status,
  type Workspace,
} from '../support/fixtures.js';

describe('workspace, members and statuses', () => {
  let ws: TestWorkspace;
  let other: TestWorkspace;
  let member: Member;
  let guest: Member;
  const workspaceName = uniqueName('Acme Design');

  beforeAll(async () => {
    ws = await createWorkspace({ name: workspaceName });
    other = await createWorkspace();
    member = await addMember(ws.workspace.id, 'member', uniqueName('Mia Member'));
    guest = await addMember(ws.workspace.id, 'guest', uniqueName('Gus Guest'));
  });

  describe('GET /v1/workspace', () => {
    it('returns exactly the workspace of the API key', async () => {
      const response = await api<Workspace>('GET', '/v1/workspace', { credentials: keyOf(ws) });
      expectStatus(response, 200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
      expect(response.body).toStrictEqual({
        id: ws.workspace.id,
        name: workspaceName,
        urlId: expect.stringMatching(/^\S+$/),
        avatarUrl: null,
        taskPrefix: expect.stringMatching(/^\S+$/),
      });
      // The admin CLI reports the same workspace the API serves.
      expect(response.body).toStrictEqual(ws.workspace);
    });

    it('gives a urlId that can stand in a task URL as it is ({app_url}/{urlId}/task/...)', async () => {
      const { urlId } = (await api<Workspace>('GET', '/v1/workspace', { credentials: keyOf(ws) })).body;
      expect(urlId).toMatch(/^[A-Za-z0-9._~-]+$/);
    });

    it('returns the workspace named by X-Workspace-Id for a Bearer token', async () => {
      const token = await issueToken(ws.workspace.id, ws.owner.userId, 'read');
      const response = await api<Workspace>('GET', '/v1/workspace', { credentials: { bearer: token, workspaceId: ws.workspace.id } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual(ws.workspace);
    });

    it('gives each workspace its own id and urlId', async () => {
      const response = await api<Workspace>('GET', '/v1/workspace', { credentials: keyOf(other) });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual(other.workspace);
      expect(response.body.id).not.toBe(ws.workspace.id);
      expect(response.body.urlId).not.toBe(ws.workspace.urlId);
    });
  });

  describe('GET /v1/members', () => {
    it('lists exactly the owner, member and guest with lower-case roles and null avatars', async () => {
      const response = await api<Member[]>('GET', '/v1/members', { credentials: keyOf(ws) });
      expectStatus(response, 200);
      const byEmail = (a: { email: string }, b: { email: string }) => a.email.localeCompare(b.email);
      expect([...response.body].sort(byEmail)).toStrictEqual(
        [
          { userId: ws.owner.userId, name: ws.owner.name, email: ws.owner.email, role: 'owner', avatarUrl: null },
          { userId: member.userId, name: member.name, email: member.email, role: 'member', avatarUrl: null },
          { userId: guest.userId, name: guest.name, email: guest.email, role: 'guest', avatarUrl: null },
        ].sort(byEmail),
      );
    });

    it('does not list members of another workspace', async () => {
      const response = await api<Member[]>('GET', '/v1/members', { credentials: keyOf(other) });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual([other.owner]);
    });

    it('gives userIds usable as assigneeId', async () => {
      const project = await createProject(keyOf(ws));
      for (const user of [ws.owner, member]) {
        const created = await createTask(keyOf(ws), { projectId: project.id, listId: project.defaultListId, assigneeId: user.userId });
        expect((await getTask(keyOf(ws), created.id)).assigneeId).toBe(user.userId);
      }
    });
  });

  describe('GET /v1/statuses', () => {
    let statuses: Status[];

    beforeAll(async () => {
      const response = await api<Status[]>('GET', '/v1/statuses', { credentials: keyOf(ws) });
      expectStatus(response, 200);
      statuses = response.body;
    });

    it('returns Status objects with exactly the contract fields', () => {
      expect(statuses.length).toBeGreaterThanOrEqual(3);
      for (const status of statuses) {
        expect(status).toStrictEqual({
          id: expect.stringMatching(/^\S+$/),
          name: expect.stringMatching(/\S/),
          color: expect.stringMatching(/^#[0-9A-Fa-f]{6}$/),
          systemType: status.systemType === null ? null : expect.stringMatching(/^(todo|done)$/),
          order: expect.any(Number),
        });
        expect(Number.isInteger(status.order)).toBe(true);
      }
      expect(new Set(statuses.map((status) => status.id)).size).toBe(statuses.length);
    });

    it('is ordered by position', () => {
      const orders = statuses.map((status) => status.order);
      expect(orders).toStrictEqual([...orders].sort((a, b) => a - b));
      expect(new Set(orders).size).toBe(orders.length);
    });

    it('has exactly one todo, exactly one done and at least one custom status', () => {
      expect(statuses.filter((status) => status.systemType === 'todo')).toHaveLength(1);
      expect(statuses.filter((status) => status.systemType === 'done')).toHaveLength(1);
      expect(statuses.filter((status) => status.systemType === null).length).toBeGreaterThanOrEqual(1);
    });

    it('serves the same statuses to a read token', async () => {
      const token = await issueToken(ws.workspace.id, guest.userId, 'read');
      const response = await api<Status[]>('GET', '/v1/statuses', { credentials: { bearer: token, workspaceId: ws.workspace.id } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual(statuses);
    });

    it('gives every workspace its own statuses', async () => {
      const response = await api<Status[]>('GET', '/v1/statuses', { credentials: keyOf(other) });
      expectStatus(response, 200);
      const mine = new Set(statuses.map((status) => status.id));
      expect(response.body.filter((status) => mine.has(status.id))).toStrictEqual([]);
    });
  });
});
