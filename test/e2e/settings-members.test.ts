import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminCli, issueToken } from '../support/admin.js';
import { createProject, createTask, pollUntil } from '../support/fixtures.js';
import { startExtraGateway, type ExtraGateway } from '../support/second-gateway.js';

/**
 * tasks.v1.SettingsService members (issue #16 §3 "Members", §5) through the real tasks service, its
 * Postgres and outbox, and two gateway replicas: owners add (by email), change roles and remove;
 * members list; guests are refused; non-members are told nothing exists; the last owner stays; a
 * removed member's key and token are refused on the very next request at both gateways, their tasks
 * are unassigned with a published task.updated each; a demotion is seen at once.
 */
const stack = inject('stack');
const proto = loadTasksProto().tasks.v1;
const settings = new proto.SettingsService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
const admin = new proto.AdminService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
const tasksApi = new proto.TasksService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
const db = new pg.Pool({ connectionString: stack.databaseUrl, max: 1, options: '-c search_path=tasks' });
let second: ExtraGateway | undefined;
afterAll(async () => {
  settings.close();
  admin.close();
  tasksApi.close();
  await db.end();
  await second?.stop();
});

type Acting = { workspaceId: string; userId: string };
type RoleName = 'ROLE_OWNER' | 'ROLE_MEMBER' | 'ROLE_GUEST' | 'ROLE_UNSPECIFIED';
const unique = `${process.pid}-${Date.now()}`;
const deadline = { deadlineMs: 20_000 };
const list = (acting: Acting) => callUnary(settings, settings.ListWorkspaceMembers, { acting });
const add = (acting: Acting, email: string, role: RoleName) => callUnary(settings, settings.AddWorkspaceMember, { acting, email, role });
const changeRole = (acting: Acting, userId: string, role: RoleName) => callUnary(settings, settings.ChangeMemberRole, { acting, userId, role }, deadline);
const remove = (acting: Acting, userId: string) => callUnary(settings, settings.RemoveMember, { acting, userId }, deadline);
const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as grpc.ServiceError);

let workspaceId: string;
let owner: Acting;
let ownerKey: string;
let gateways: string[];

/** A member added by the owner through the settings, with an API key of their own. */
async function person(label: string, role: RoleName = 'ROLE_MEMBER'): Promise<Acting & { email: string }> {
  const email = `${label}-${unique}@example.com`;
  const added = await add(owner, email, role);
  return { workspaceId, userId: added.member!.member!.userId, email };
}
async function keyOf(acting: Acting, name = 'theirs'): Promise<string> {
  return (await callUnary(settings, settings.CreateApiKey, { acting, name })).apiKey!.key;
}
const viaKey = (gateway: string, key: string, path = '/v1/workspace') => fetch(`${gateway}${path}`, { headers: { 'x-api-key': key } });
const viaToken = (gateway: string, token: string) =>
  fetch(`${gateway}/v1/workspace`, { headers: { authorization: `Bearer ${token}`, 'x-workspace-id': workspaceId } });
const statuses = async (requests: Array<Promise<Response>>) => (await Promise.all(requests)).map((response) => response.status);

beforeAll(async () => {
  const created = await callUnary(admin, admin.CreateWorkspace, { name: `Members ${unique}`, plan: 'PLAN_PRO', ownerName: 'Olive Owner', ownerEmail: `owner-${unique}@example.com` });
  workspaceId = created.workspace!.id;
  owner = { workspaceId, userId: created.owner!.userId };
  ownerKey = created.apiKey!.key;
  second = await startExtraGateway(`members-${process.pid}`);
  gateways = [stack.gatewayUrl, second.url];
}, 120_000);

describe('SettingsService members', () => {
  it('the owner adds a person by email (normalised, named after the local part) and everyone but guests lists the members in joining order', async () => {
    const email = `  Ada.Lovelace-${unique}@Example.COM `;
    const added = await add(owner, email, 'ROLE_MEMBER');
    expect(added.member?.member).toMatchObject({ email: email.trim().toLowerCase(), name: `ada.lovelace-${unique}`, role: 'ROLE_MEMBER' });
    expect(Date.parse(added.member!.joinedAt)).toBeGreaterThan(Date.now() - 60_000);
    const ada = { workspaceId, userId: added.member!.member!.userId };

    const listed = await list(ada);
    expect(listed.truncated).toBe(false);
    expect(listed.members.map((summary) => summary.member!.userId).slice(0, 2)).toEqual([owner.userId, ada.userId]);
    expect(listed.members[0]!.member).toMatchObject({ name: 'Olive Owner', role: 'ROLE_OWNER' });
    // The same person in the public API's member list.
    const members = (await (await viaKey(stack.gatewayUrl, ownerKey, '/v1/members')).json()) as Array<{ userId: string; role: string }>;
    expect(members.find((member) => member.userId === ada.userId)?.role).toBe('member');
  });

  it('a person who already has an account keeps their name; someone already a member is ALREADY_EXISTS', async () => {
    const elsewhere = await callUnary(admin, admin.CreateWorkspace, { name: `Elsewhere ${unique}`, plan: 'PLAN_FREE', ownerName: 'Known Name', ownerEmail: `known-${unique}@example.com` });
    const added = await add(owner, `KNOWN-${unique}@example.com`, 'ROLE_GUEST');
    expect(added.member?.member).toMatchObject({ userId: elsewhere.owner!.userId, name: 'Known Name', role: 'ROLE_GUEST' });
    const again = await failure(add(owner, `known-${unique}@example.com`, 'ROLE_MEMBER'));
    expect(again).toMatchObject({ code: grpc.status.ALREADY_EXISTS });
  });

  it.each([
    ['not an email', 'not-an-email', 'ROLE_MEMBER'],
    ['empty', '', 'ROLE_MEMBER'],
    ['over 320 characters', `${'a'.repeat(64)}@${'b'.repeat(250)}.example.com`, 'ROLE_MEMBER'],
    ['without a role', `norole-${unique}@example.com`, 'ROLE_UNSPECIFIED'],
  ] as const)('refuses an address that is %s (INVALID_ARGUMENT)', async (_label, email, role) => {
    expect(await failure(add(owner, email, role))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });

  it('members and guests cannot add, change or remove (PERMISSION_DENIED); guests cannot even list', async () => {
    const mia = await person('mia');
    const gus = await person('gus', 'ROLE_GUEST');
    for (const acting of [mia, gus]) {
      for (const call of [() => add(acting, `x-${unique}@example.com`, 'ROLE_MEMBER'), () => changeRole(acting, owner.userId, 'ROLE_GUEST'), () => remove(acting, owner.userId)]) {
        expect(await failure(call())).toMatchObject({ code: grpc.status.PERMISSION_DENIED });
      }
    }
    const refused = await failure(list(gus));
    expect(refused).toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    expect(refused!.details).toMatch(/guests cannot/);
    expect((await list(owner)).members.find((summary) => summary.member!.userId === owner.userId)?.member?.role).toBe('ROLE_OWNER');
  });

  it('someone of another workspace, a workspace that does not exist, or an unknown member is NOT_FOUND', async () => {
    const outsider = await callUnary(admin, admin.CreateWorkspace, { name: `Outside ${unique}`, plan: 'PLAN_FREE', ownerName: 'Out', ownerEmail: `out-${unique}@example.com` });
    const stranger = { workspaceId, userId: outsider.owner!.userId };
    for (const call of [() => list(stranger), () => add(stranger, `y-${unique}@example.com`, 'ROLE_MEMBER'), () => changeRole(stranger, owner.userId, 'ROLE_GUEST'), () => remove(stranger, owner.userId)]) {
      expect(await failure(call())).toMatchObject({ code: grpc.status.NOT_FOUND });
    }
    expect(await failure(list({ workspaceId: '00000000-0000-4000-8000-000000000000', userId: owner.userId }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    // A member of the other workspace is not one of this one.
    expect(await failure(remove(owner, outsider.owner!.userId))).toMatchObject({ code: grpc.status.NOT_FOUND });
    expect(await failure(changeRole(owner, 'not-a-uuid', 'ROLE_MEMBER'))).toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('the last owner can be neither demoted nor removed, not even by themselves (FAILED_PRECONDITION); with a second owner they can', async () => {
    for (const call of [() => changeRole(owner, owner.userId, 'ROLE_MEMBER'), () => remove(owner, owner.userId)]) {
      const refused = await failure(call());
      expect(refused).toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
      expect(refused!.details).toMatch(/at least one owner/);
    }
    const otto = await person('otto', 'ROLE_OWNER');
    // The new owner demotes the first one, then is the last owner in turn.
    expect((await changeRole(otto, owner.userId, 'ROLE_MEMBER')).member?.member?.role).toBe('ROLE_MEMBER');
    expect(await failure(changeRole(otto, otto.userId, 'ROLE_GUEST'))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
    expect(await failure(changeRole(owner, owner.userId, 'ROLE_OWNER'))).toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    expect((await changeRole(otto, owner.userId, 'ROLE_OWNER')).confirmed).toBe(true);
    // An owner may leave while another stays.
    expect((await remove(otto, otto.userId)).confirmed).toBe(true);
    expect((await list(owner)).members.map((summary) => summary.member!.userId)).not.toContain(otto.userId);
  });

  it('a demotion is seen at once: to guest revokes their keys (401 on both gateways on the very next request), and the role is new everywhere', async () => {
    const dee = await person('dee');
    const key = await keyOf(dee);
    for (const gateway of gateways) for (let n = 0; n < 3; n++) expect((await viaKey(gateway, key)).status).toBe(200);
    const changed = await changeRole(owner, dee.userId, 'ROLE_GUEST');
    expect(changed).toMatchObject({ revokedApiKeys: 1, confirmed: true });
    expect(await statuses(gateways.map((gateway) => viaKey(gateway, key)))).toEqual([401, 401]);
    const members = (await (await viaKey(second!.url, ownerKey, '/v1/members')).json()) as Array<{ userId: string; role: string }>;
    expect(members.find((member) => member.userId === dee.userId)?.role).toBe('guest');
    const memberships = await callUnary(tasksApi, tasksApi.ListMembershipsByEmail, { email: dee.email });
    expect(memberships.memberships.find((membership) => membership.workspace?.id === workspaceId)?.role).toBe('ROLE_GUEST');
  });

  it('removal: their key and token are refused on the very next request at both gateways, their tasks unassigned with a published task.updated each', async () => {
    const rex = await person('rex');
    const key = await keyOf(rex);
    const token = await issueToken(workspaceId, rex.userId, 'read write');
    const project = await createProject({ apiKey: ownerKey });
    const assigned: Array<{ id: string }> = [];
    for (let n = 0; n < 3; n++) assigned.push(await createTask({ apiKey: ownerKey }, { projectId: project.id, listId: project.defaultListId, assigneeId: rex.userId }));
    const kept = await createTask({ apiKey: ownerKey }, { projectId: project.id, listId: project.defaultListId, assigneeId: owner.userId });
    // Warm both gateways' caches for the key and the token.
    for (const gateway of gateways) {
      for (let n = 0; n < 3; n++) {
        expect((await viaKey(gateway, key)).status).toBe(200);
        expect((await viaToken(gateway, token)).status).toBe(200);
      }
    }

    const removed = await remove(owner, rex.userId);
    expect(removed).toMatchObject({ userId: rex.userId, unassignedTasks: 3, confirmed: true });
    expect(await statuses(gateways.map((gateway) => viaKey(gateway, key)))).toEqual([401, 401]);
    expect(await statuses(gateways.map((gateway) => viaToken(gateway, token)))).toEqual([403, 403]);

    // AuthenticateApiKey itself refuses the former member's key: it went with the membership.
    expect(await failure(callUnary(tasksApi, tasksApi.AuthenticateApiKey, { key }))).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    const keys = await db.query('SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1 AND user_id = $2', [workspaceId, rex.userId]);
    expect(keys.rows[0].n).toBe(0);

    const tasks = (await (await viaKey(stack.gatewayUrl, ownerKey, `/v1/projects/${project.id}/tasks`)).json()) as Array<{ id: string; assigneeId: string | null }>;
    expect(tasks.filter((task) => task.assigneeId === null).map((task) => task.id).sort()).toEqual(assigned.map((task) => task.id).sort());
    expect(tasks.find((task) => task.id === kept.id)?.assigneeId).toBe(owner.userId);

    // One task.updated per unassigned task, with assigneeId null, published by the relay.
    const events = await pollUntil(
      async () =>
        (
          await db.query<{ aggregateid: string; payload: { event: string; data: { assigneeId: string | null } }; published: boolean }>(
            `SELECT aggregateid, payload, published_at IS NOT NULL AS published FROM outbox
             WHERE aggregateid = ANY($1::text[]) AND type = 'task.updated'`,
            [assigned.map((task) => task.id)],
          )
        ).rows,
      (rows) => rows.length === 3 && rows.every((row) => row.published),
      { timeoutMs: 15_000 },
    );
    expect(events.map((row) => row.aggregateid).sort()).toEqual(assigned.map((task) => task.id).sort());
    for (const row of events) expect(row.payload).toMatchObject({ event: 'task.updated', data: { assigneeId: null } });
    expect(events.every((row) => row.published)).toBe(true);

    // Gone from the lists; they can be added again (a fresh membership, no keys).
    expect((await list(owner)).members.map((summary) => summary.member!.userId)).not.toContain(rex.userId);
    expect(await failure(list(rex))).toMatchObject({ code: grpc.status.NOT_FOUND });
    expect((await add(owner, rex.email, 'ROLE_MEMBER')).member?.member?.userId).toBe(rex.userId);
    // The owner's own key was never disturbed.
    expect(await statuses(gateways.map((gateway) => viaKey(gateway, ownerKey)))).toEqual([200, 200]);
  });

  it('the admin CLI still adds members for operators (the same path: ALREADY_EXISTS for a member)', async () => {
    const result = await adminCli(['member', 'add', '--workspace', workspaceId, '--email', `cli-${unique}@example.com`, '--name', 'From the CLI', '--role', 'member']);
    expect(result.code, JSON.stringify(result.json)).toBe(0);
    expect((await list(owner)).members.map((summary) => summary.member!.email)).toContain(`cli-${unique}@example.com`);
    const again = await adminCli(['member', 'add', '--workspace', workspaceId, '--email', `cli-${unique}@example.com`, '--name', 'Again', '--role', 'member']);
    expect(again.code).not.toBe(0);
  });
});
