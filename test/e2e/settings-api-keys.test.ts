import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminCli } from '../support/admin.js';

/**
 * tasks.v1.SettingsService (the API keys of the workspace settings) through the real tasks service
 * and its Postgres: owners manage every key, members their own, guests none, non-members are told
 * nothing exists; the revocation is the immediate one of the admin CLI (the gateway refuses the key
 * on the very next request); "last used at" is recorded by AuthenticateApiKey.
 */
const stack = inject('stack');
const proto = loadTasksProto().tasks.v1;
const settings = new proto.SettingsService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
const admin = new proto.AdminService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
const db = new pg.Pool({ connectionString: stack.databaseUrl, max: 1, options: '-c search_path=tasks' });
afterAll(async () => {
  settings.close();
  admin.close();
  await db.end();
});

const unique = `${process.pid}-${Date.now()}`;
type Acting = { workspaceId: string; userId: string };
const list = (acting: Acting) => callUnary(settings, settings.ListApiKeys, { acting });
const create = (acting: Acting, name: string) => callUnary(settings, settings.CreateApiKey, { acting, name });
const revoke = (acting: Acting, id: string) => callUnary(settings, settings.RevokeApiKey, { acting, id }, { deadlineMs: 20_000 });
const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as grpc.ServiceError);
const workspaceRequest = (key: string) => fetch(`${stack.gatewayUrl}/v1/workspace`, { headers: { 'x-api-key': key } });

let workspaceId: string;
let owner: Acting;
let member: Acting;
let otherMember: Acting;
let guest: Acting;
let defaultKeyId: string;

beforeAll(async () => {
  const created = await callUnary(admin, admin.CreateWorkspace, {
    name: `Keys ${unique}`,
    plan: 'PLAN_FREE',
    ownerName: 'Olive Owner',
    ownerEmail: `owner-${unique}@example.com`,
  });
  workspaceId = created.workspace!.id;
  defaultKeyId = created.apiKey!.id;
  owner = { workspaceId, userId: created.owner!.userId };
  const add = async (label: string, role: 'ROLE_MEMBER' | 'ROLE_GUEST') => {
    const added = await callUnary(admin, admin.AddMember, { workspaceId, email: `${label}-${unique}@example.com`, name: `${label} person`, role });
    return { workspaceId, userId: added.member!.userId };
  };
  member = await add('mia', 'ROLE_MEMBER');
  otherMember = await add('max', 'ROLE_MEMBER');
  guest = await add('gus', 'ROLE_GUEST');
});

describe('SettingsService API keys', () => {
  it('a member creates a key (shown once, with its prefix) that works at the gateway and lists only their own keys', async () => {
    const created = await create(member, 'CI deploys');
    expect(created.apiKey?.key).toMatch(/^tws_[0-9A-Za-z]{40}$/);
    expect(created.summary).toMatchObject({ name: 'CI deploys', prefix: created.apiKey!.key.slice(0, 8), createdByUserId: member.userId, createdByName: 'mia person' });
    expect(created.summary?.lastUsedAt ?? undefined).toBeUndefined();
    expect((await workspaceRequest(created.apiKey!.key)).status).toBe(200);

    const listed = await list(member);
    expect(listed.apiKeys.map((key) => key.id)).toEqual([created.apiKey!.id]);
    expect(JSON.stringify(listed)).not.toContain(created.apiKey!.key);
    expect(listed.truncated).toBe(false);
  });

  it('an owner sees every live key of the workspace, newest first, including the admin CLI’s', async () => {
    const mine = await create(owner, 'Owner key');
    const theirs = await create(otherMember, 'Max key');
    const listed = await list(owner);
    const ids = listed.apiKeys.map((key) => key.id);
    expect(ids.slice(0, 2)).toEqual([theirs.apiKey!.id, mine.apiKey!.id]);
    expect(ids).toContain(defaultKeyId);
    expect(listed.apiKeys.find((key) => key.id === defaultKeyId)).toMatchObject({ name: 'Default key', createdByName: 'Olive Owner' });
    expect(new Set(listed.apiKeys.map((key) => key.createdByUserId))).toEqual(new Set([owner.userId, member.userId, otherMember.userId]));
  });

  it('a member cannot revoke another member’s or the owner’s key (PERMISSION_DENIED), and the key keeps working', async () => {
    const ownerKey = await create(owner, 'Not yours');
    const refused = await failure(revoke(member, ownerKey.apiKey!.id));
    expect(refused).toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    expect(refused!.details).toMatch(/only the API keys they created/);
    const maxKey = await create(otherMember, 'Max second');
    expect(await failure(revoke(member, maxKey.apiKey!.id))).toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    expect((await workspaceRequest(ownerKey.apiKey!.key)).status).toBe(200);
    expect((await workspaceRequest(maxKey.apiKey!.key)).status).toBe(200);
  });

  it('a member revokes their own key: the very next gateway request with it is 401, and it leaves the list', async () => {
    const created = await create(member, 'Short lived');
    expect((await workspaceRequest(created.apiKey!.key)).status).toBe(200);
    const revoked = await revoke(member, created.apiKey!.id);
    expect(revoked).toMatchObject({ id: created.apiKey!.id, confirmed: true });
    expect((await workspaceRequest(created.apiKey!.key)).status).toBe(401);
    expect((await list(member)).apiKeys.map((key) => key.id)).not.toContain(created.apiKey!.id);
  });

  it('an owner revokes a member’s key at once', async () => {
    const created = await create(otherMember, 'Owner revokes this');
    expect((await workspaceRequest(created.apiKey!.key)).status).toBe(200);
    await revoke(owner, created.apiKey!.id);
    expect((await workspaceRequest(created.apiKey!.key)).status).toBe(401);
  });

  it('a guest can do none of it (PERMISSION_DENIED), and gets no data', async () => {
    for (const call of [() => list(guest), () => create(guest, 'Guest key'), () => revoke(guest, defaultKeyId)]) {
      const refused = await failure(call());
      expect(refused).toMatchObject({ code: grpc.status.PERMISSION_DENIED });
      expect(refused!.details).toMatch(/guests cannot create or manage API keys/);
    }
    expect((await workspaceRequest((await create(owner, 'still works')).apiKey!.key)).status).toBe(200);
    const { rows } = await db.query('SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1 AND user_id = $2', [workspaceId, guest.userId]);
    expect(rows[0].n).toBe(0);
  });

  it('someone of another workspace, or a workspace that does not exist, is NOT_FOUND', async () => {
    const outsider = await callUnary(admin, admin.CreateWorkspace, { name: `Outside ${unique}`, plan: 'PLAN_FREE', ownerName: 'Out', ownerEmail: `out-${unique}@example.com` });
    const stranger = { workspaceId, userId: outsider.owner!.userId };
    for (const call of [() => list(stranger), () => create(stranger, 'x'), () => revoke(stranger, defaultKeyId)]) {
      expect(await failure(call())).toMatchObject({ code: grpc.status.NOT_FOUND });
    }
    // A key id of another workspace, revoked from this one, is not found either.
    expect(await failure(revoke(owner, outsider.apiKey!.id))).toMatchObject({ code: grpc.status.NOT_FOUND });
    expect(await failure(list({ workspaceId: '00000000-0000-4000-8000-000000000000', userId: owner.userId }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    expect(await failure(list({ workspaceId: 'not-a-uuid', userId: owner.userId }))).toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['over 100 characters', 'k'.repeat(101)],
  ])('refuses a name that is %s (INVALID_ARGUMENT)', async (_label, name) => {
    expect(await failure(create(member, name))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });

  it('accepts a name of exactly 100 characters', async () => {
    expect((await create(member, 'n'.repeat(100))).summary?.name).toHaveLength(100);
  });

  it('"last used at" is recorded when the gateway authenticates the key, at most once a minute', async () => {
    const created = await create(member, 'Used');
    expect((await workspaceRequest(created.apiKey!.key)).status).toBe(200);
    const lastUsed = async () => (await list(member)).apiKeys.find((key) => key.id === created.apiKey!.id)?.lastUsedAt ?? undefined;
    const deadline = Date.now() + 5_000;
    let first: string | undefined;
    while (!(first = await lastUsed()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(first, 'last used at is set').toBeDefined();
    expect(Math.abs(Date.parse(first!) - Date.now())).toBeLessThan(60_000);
    // Within the minute a later use does not write the row again (in-memory throttle and conditional UPDATE).
    const tasks = new proto.TasksService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
    try {
      await callUnary(tasks, tasks.AuthenticateApiKey, { key: created.apiKey!.key });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await lastUsed()).toBe(first);
    } finally {
      tasks.close();
    }
  });

  it('the admin CLI still creates and revokes keys for operators (one path with the settings rules)', async () => {
    const created = await adminCli(['apikey', 'create', '--workspace', workspaceId, '--user', member.userId, '--name', 'From the CLI']);
    expect(created.code, JSON.stringify(created.json)).toBe(0);
    const id = (created.json as { apiKey: { id: string } }).apiKey.id;
    expect((await list(member)).apiKeys.map((key) => key.name)).toContain('From the CLI');
    const revoked = await adminCli(['apikey', 'revoke', '--workspace', workspaceId, '--id', id]);
    expect(revoked.code, JSON.stringify(revoked.json)).toBe(0);
    expect((await list(member)).apiKeys.map((key) => key.id)).not.toContain(id);
  });
});
