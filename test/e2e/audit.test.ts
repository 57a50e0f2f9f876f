import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, issueToken, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import { attach } from '../support/attachments.js';
import {
  addMember,
  createApiKey,
  createComment,
  createProject,
  createSection,
  createTask,
  expectError,
  expectStatus,
  keyOf,
  patchTask,
  TIMESTAMP,
  unknownId,
} from '../support/fixtures.js';
import { registerWebhook } from '../support/webhooks/fixtures.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';

interface AuditEntry {
  id: string;
  at: string;
  actor: { type: 'apiKey' | 'user' | 'system'; id: string | null; name: string | null };
  action: string;
  resource: { type: string; id: string };
  changes: string[];
  requestId: string | null;
}

const audit = (credentials: Credentials, query = '') => api<AuditEntry[] & { error?: string }>('GET', `/v1/audit${query}`, { credentials });

/** Every entry, following `Link: <…>; rel="next"` from the first page of `limit`. */
async function allEntries(credentials: Credentials, limit: number): Promise<{ entries: AuditEntry[]; pages: number }> {
  const entries: AuditEntry[] = [];
  let query = `?limit=${limit}`;
  for (let pages = 1; pages < 500; pages += 1) {
    const response = await audit(credentials, query);
    expect(response.status, response.text).toBe(200);
    expect(response.body.length).toBeLessThanOrEqual(limit);
    entries.push(...response.body);
    const link = response.headers.get('link');
    if (link === null) return { entries, pages };
    const next = /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
    if (next === undefined) throw new Error(`unexpected Link ${link}`);
    query = new URL(next).search;
  }
  throw new Error('too many pages');
}

/** The entries of one action on one resource. */
const of = (entries: AuditEntry[], action: string, resourceId: string): AuditEntry[] =>
  entries.filter((entry) => entry.action === action && entry.resource.id === resourceId);

describe('audit log per workspace (issue #19 item 3)', () => {
  let ws: TestWorkspace;
  let key: Credentials;
  let receiver: TestReceiver;

  beforeAll(async () => {
    ws = await createWorkspace();
    key = keyOf(ws);
    receiver = await startReceiver({ reply: () => 204 });
  });
  afterAll(async () => receiver?.close());

  it('records every change once, with the API key, the changed field names and the request id, newest first; paging loses and repeats nothing', async () => {
    const keyActor = { type: 'apiKey', id: ws.apiKey.id, name: ws.apiKey.name };
    const project = await createProject(key);
    expectStatus(await api('PATCH', `/v1/projects/${project.id}`, { credentials: key, body: { name: 'Renamed', description: 'd' } }), 200);
    const section = await createSection(key, project.id);
    expectStatus(await api('PATCH', `/v1/sections/${section.id}`, { credentials: key, body: { name: 'Later' } }), 200);
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    const patched = await api('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body: { name: 'Done soon', isCompleted: true } });
    expectStatus(patched, 200);
    const comment = await createComment(key, task.id);
    expectStatus(await api('DELETE', `/v1/comments/${comment.id}`, { credentials: key }), 204);
    const attachment = await attach(key, task.id, { name: 'a.txt', contentType: 'text/plain', bytes: Buffer.from('audit me') });
    const secret = `whsec_${randomBytes(18).toString('base64')}`;
    const rotated = `whsec_${randomBytes(18).toString('base64')}`;
    const webhook = await registerWebhook(key, { url: `${receiver.origin}/audit`, secret });
    expectStatus(await api('PATCH', `/v1/webhooks/${webhook.id}`, { credentials: key, body: { enabled: false } }), 200);
    expectStatus(await api('POST', `/v1/webhooks/${webhook.id}/rotate-secret`, { credentials: key, body: { secret: rotated } }), 200);
    expectStatus(await api('DELETE', `/v1/webhooks/${webhook.id}`, { credentials: key }), 204);
    // The operator's path (admin CLI): no credential made it, so the actor is `system`.
    const cliKey = await createApiKey(ws.workspace.id, ws.owner.userId);
    expectStatus(await api('DELETE', `/v1/tasks/${task.id}`, { credentials: key }), 204);

    const { entries, pages } = await allEntries(key, 3);
    expect(pages).toBeGreaterThan(4);
    // One page of 200 holds the same entries in the same order: the cursor lost and repeated nothing.
    const whole = await allEntries(key, 200);
    expect(whole.pages).toBe(1);
    expect(entries.map((entry) => entry.id)).toEqual(whole.entries.map((entry) => entry.id));
    expect(new Set(entries.map((entry) => entry.id)).size).toBe(entries.length);
    for (let i = 1; i < entries.length; i += 1) expect(Date.parse(entries[i - 1]!.at)).toBeGreaterThanOrEqual(Date.parse(entries[i]!.at));
    for (const entry of entries) expect(entry.at).toMatch(TIMESTAMP);

    const expected: Array<[string, string, string[]]> = [
      ['project.created', project.id, []],
      ['project.updated', project.id, ['description', 'name']],
      ['section.created', section.id, []],
      ['section.updated', section.id, ['name']],
      ['task.created', task.id, []],
      ['task.updated', task.id, ['isCompleted', 'name', 'statusId']],
      ['comment.created', comment.id, []],
      ['comment.deleted', comment.id, []],
      ['attachment.created', attachment.id, []],
      ['webhook.created', webhook.id, []],
      ['webhook.updated', webhook.id, ['enabled']],
      ['webhook.secret_rotated', webhook.id, ['secret']],
      ['webhook.deleted', webhook.id, []],
      ['task.deleted', task.id, []],
      ['attachment.deleted', attachment.id, []],
    ];
    for (const [action, id, changes] of expected) {
      const found = of(entries, action, id);
      expect(found, `${action} ${id}`).toHaveLength(1);
      expect([...found[0]!.changes].sort(), action).toEqual(changes);
      expect(found[0]!.actor, action).toEqual(keyActor);
      expect(found[0]!.requestId, action).toMatch(/.+/);
    }
    // The request id is the one the response carried.
    expect(of(entries, 'task.updated', task.id)[0]!.requestId).toBe(patched.headers.get('x-request-id'));
    // Newest first: the deletion after the creation.
    const position = (action: string, id: string): number => entries.findIndex((entry) => entry.action === action && entry.resource.id === id);
    expect(position('task.deleted', task.id)).toBeLessThan(position('task.created', task.id));
    expect(position('webhook.deleted', webhook.id)).toBeLessThan(position('webhook.created', webhook.id));
    // The workspace itself and the CLI's key were made by the operator.
    expect(of(entries, 'apiKey.created', cliKey.id)[0]?.actor).toEqual({ type: 'system', id: null, name: null });
    expect(of(entries, 'workspace.created', ws.workspace.id)).toHaveLength(1);
    // Names only: no secret, no URL, no comment text in the log.
    const text = JSON.stringify(entries);
    for (const value of [secret, rotated, receiver.origin, 'A comment', 'Done soon', cliKey.key]) expect(text).not.toContain(value);
  });

  it('writes of two keys sent together (the gateway coalesces them into one call) are each audited as their own key', async () => {
    const own = await createWorkspace();
    const first = keyOf(own);
    const second = await createApiKey(own.workspace.id, own.owner.userId);
    const project = await createProject(first);
    const keys = [first, { apiKey: second.key }];
    const created = await Promise.all(
      Array.from({ length: 12 }, (_, index) => createTask(keys[index % 2]!, { projectId: project.id, listId: project.defaultListId })),
    );
    await Promise.all(created.map((task, index) => patchTask(keys[index % 2]!, task.id, { isCompleted: true })));
    const { entries } = await allEntries(first, 200);
    const actorIds = [own.apiKey.id, second.id];
    created.forEach((task, index) => {
      for (const action of ['task.created', 'task.updated']) {
        const found = of(entries, action, task.id);
        expect(found, `${action} ${task.id}`).toHaveLength(1);
        expect(found[0]!.actor.id, `${action} of task ${index}`).toBe(actorIds[index % 2]);
      }
    });
  });

  it('a failed change (404, 400, 412) writes no audit row', async () => {
    const own = keyOf(await createWorkspace());
    const project = await createProject(own);
    const task = await createTask(own, { projectId: project.id, listId: project.defaultListId });
    const before = (await allEntries(own, 200)).entries.map((entry) => entry.id);
    expectError(await api('PATCH', `/v1/tasks/${task.id}`, { credentials: own, body: { statusId: unknownId() } }), 400);
    expectError(await api('PATCH', `/v1/tasks/${task.id}`, { credentials: own, body: { name: 'x' }, headers: { 'if-match': '"stale"' } }), 412);
    expectError(await api('PATCH', `/v1/projects/${project.id}`, { credentials: own, body: { name: 'x' }, headers: { 'if-match': '"stale"' } }), 412);
    expectError(await api('POST', '/v1/sections', { credentials: own, body: { projectId: unknownId(), name: 'S' } }), 404);
    expectError(await api('DELETE', `/v1/tasks/${unknownId()}`, { credentials: own }), 404);
    expectError(await api('DELETE', `/v1/comments/${unknownId()}`, { credentials: own }), 404);
    expectError(await api('PATCH', `/v1/webhooks/${unknownId()}`, { credentials: own, body: { enabled: false } }), 404);
    // A PATCH that changes nothing is no change either.
    const unchanged = await patchTask(own, task.id, { name: (await api<{ name: string }>('GET', `/v1/tasks/${task.id}`, { credentials: own })).body.name });
    expect(unchanged.id).toBe(task.id);
    expect((await allEntries(own, 200)).entries.map((entry) => entry.id)).toEqual(before);
  });

  it('owners only: a member\'s key and a member\'s token get 403; an owner\'s token reads, and its writes name the person', async () => {
    const own = await createWorkspace();
    const member = await addMember(own.workspace.id, 'member');
    const memberKey = await createApiKey(own.workspace.id, member.userId);
    expectError(await audit({ apiKey: memberKey.key }), 403);
    const memberToken = await issueToken(own.workspace.id, member.userId, 'read write');
    expectError(await audit({ bearer: memberToken, workspaceId: own.workspace.id }), 403);
    // The member's own changes are audited all the same, under their key.
    const project = await createProject({ apiKey: memberKey.key });

    const ownerToken = { bearer: await issueToken(own.workspace.id, own.owner.userId, 'read write'), workspaceId: own.workspace.id };
    const section = await createSection(ownerToken, project.id);
    const read = await audit({ bearer: await issueToken(own.workspace.id, own.owner.userId, 'read'), workspaceId: own.workspace.id });
    expect(read.status, read.text).toBe(200);
    expect(of(read.body, 'section.created', section.id)[0]?.actor).toEqual({ type: 'user', id: own.owner.userId, name: null });
    expect(of(read.body, 'project.created', project.id)[0]?.actor).toEqual({ type: 'apiKey', id: memberKey.id, name: memberKey.name });
    expect(of(read.body, 'member.added', member.userId)).toHaveLength(1);
    expect(of(read.body, 'apiKey.created', memberKey.id)).toHaveLength(1);
  });

  it("another workspace's entries never appear, and a malformed or edited cursor is a 400", async () => {
    const other = await createWorkspace();
    const otherProject = await createProject(keyOf(other));
    const mine = await allEntries(key, 200);
    expect(mine.entries.some((entry) => entry.resource.id === otherProject.id || entry.resource.id === other.workspace.id)).toBe(false);
    const theirs = await allEntries(keyOf(other), 200);
    expect(of(theirs.entries, 'project.created', otherProject.id)).toHaveLength(1);
    expect(theirs.entries.some((entry) => mine.entries.some((own) => own.id === entry.id))).toBe(false);
    expectError(await audit(key, '?cursor=abc'), 400);
    expectError(await audit(key, '?limit=0'), 400);
    expectError(await audit(key, '?limit=201'), 400);
    const page = await audit(key, '?limit=1');
    const cursor = new URL(/^<([^>]+)>/.exec(page.headers.get('link') ?? '')![1]!).searchParams.get('cursor')!;
    expectError(await audit(key, `?cursor=${cursor.slice(0, -2)}AA`), 400);
    expectError(await audit({}), 401);
  });
});
