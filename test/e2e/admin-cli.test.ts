import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { adminCliPath } from '@tws/devstack';
import { loadTasksProto } from '@tws/proto-types';
import { importSPKI, jwtVerify, decodeJwt } from 'jose';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { adminCli, createWorkspace } from '../support/admin.js';

const stack = inject('stack');
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const unique = `${process.pid}-${Date.now()}`;

const proto = loadTasksProto();
const tasksClient = new proto.tasks.v1.TasksService(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
afterAll(() => tasksClient.close());

/** Whether the tasks service accepts a key (straight over gRPC, independent of the gateway). */
async function keyWorks(key: string): Promise<boolean> {
  try {
    await callUnary(tasksClient, tasksClient.AuthenticateApiKey, { key });
    return true;
  } catch (error) {
    if ((error as grpc.ServiceError).code === grpc.status.UNAUTHENTICATED) return false;
    throw error;
  }
}

function expectUsageError(result: { code: number; json: Record<string, unknown> }, message?: RegExp): void {
  expect(result.code).toBe(2);
  expect(Object.keys(result.json)).toEqual(['error']);
  if (message) expect(result.json.error).toMatch(message);
}

function expectFailure(result: { code: number; json: Record<string, unknown> }, message: RegExp): void {
  expect(result.code).toBe(1);
  expect(result.json).toEqual({ error: expect.stringMatching(message) });
}

describe('admin CLI: workspace create', () => {
  it('creates a free workspace with its owner and a first API key, with defaults', async () => {
    const result = await adminCli(['workspace', 'create', '--name', `Acme Ops ${unique}`]);
    expect(result.code).toBe(0);
    const { workspace, owner, apiKey } = result.json as {
      workspace: Record<string, unknown>;
      owner: Record<string, unknown>;
      apiKey: Record<string, unknown>;
    };
    expect(Object.keys(result.json).sort()).toEqual(['apiKey', 'owner', 'workspace']);
    expect(workspace).toEqual({
      id: expect.stringMatching(uuid),
      name: `Acme Ops ${unique}`,
      urlId: expect.stringMatching(/^acme-ops-[a-z0-9-]+-[a-z0-9]{6}$/),
      avatarUrl: null,
      taskPrefix: expect.stringMatching(/^[A-Z][A-Z0-9]*$/),
    });
    expect(owner).toEqual({
      userId: expect.stringMatching(uuid),
      name: 'Owner',
      email: `owner@${String(workspace.urlId)}.example`,
      role: 'owner',
      avatarUrl: null,
    });
    expect(apiKey).toEqual({ id: expect.stringMatching(uuid), name: 'Default key', key: expect.stringMatching(/^tws_[0-9A-Za-z]{40}$/) });
    expect(await keyWorks(String(apiKey.key))).toBe(true);
  });

  it('takes the plan, owner name and owner email', async () => {
    const email = `Founder-${unique}@Example.com`;
    const result = await adminCli([
      'workspace', 'create', '--name', `Pro Team ${unique}`, '--plan', 'pro', '--owner-name', 'Ada Lovelace', '--owner-email', email,
    ]);
    expect(result.code).toBe(0);
    expect(result.json.owner).toMatchObject({ name: 'Ada Lovelace', email: email.toLowerCase(), role: 'owner' });
  });

  it('gives distinct url ids to workspaces of the same name', async () => {
    const [a, b] = await Promise.all([createWorkspace({ name: 'Same Name' }), createWorkspace({ name: 'Same Name' })]);
    expect(a.workspace.urlId).not.toBe(b.workspace.urlId);
    expect(a.workspace.urlId).toMatch(/^same-name-[a-z0-9]{6}$/);
  });

  it('refuses bad usage with exit code 2', async () => {
    expectUsageError(await adminCli(['workspace', 'create']), /--name/);
    expectUsageError(await adminCli(['workspace', 'create', '--name', 'X', '--plan', 'gold']), /--plan/);
    expectUsageError(await adminCli(['workspace', 'create', '--name', 'X', '--owner-email', 'not-an-email']), /--owner-email/);
    expectUsageError(await adminCli(['workspace', 'create', '--name', 'X', '--colour', 'red']), /colour/);
    expectUsageError(await adminCli(['workspace', 'delete', '--name', 'X']), /unknown command "workspace delete"/);
    expectUsageError(await adminCli([]), /no command/);
  });
});

describe('admin CLI: members and API keys', () => {
  it('adds members; a user is shared across workspaces by email', async () => {
    const first = await createWorkspace();
    const second = await createWorkspace();
    const email = `grace-${unique}@example.com`;
    const added = await adminCli(['member', 'add', '--workspace', first.workspace.id, '--email', email, '--name', 'Grace', '--role', 'member']);
    expect(added.code).toBe(0);
    expect(added.json).toEqual({
      member: { userId: expect.stringMatching(uuid), name: 'Grace', email, role: 'member', avatarUrl: null },
    });
    const again = await adminCli(['member', 'add', '--workspace', second.workspace.id, '--email', email, '--name', 'Grace', '--role', 'guest']);
    expect(again.code).toBe(0);
    expect(again.json.member).toMatchObject({ userId: (added.json.member as { userId: string }).userId, role: 'guest' });

    expectFailure(
      await adminCli(['member', 'add', '--workspace', first.workspace.id, '--email', email, '--name', 'Grace', '--role', 'owner']),
      /already a member/,
    );
    expectUsageError(
      await adminCli(['member', 'add', '--workspace', first.workspace.id, '--email', email, '--name', 'Grace', '--role', 'admin']),
      /--role/,
    );
    expectFailure(
      await adminCli(['member', 'add', '--workspace', '00000000-0000-4000-8000-000000000000', '--email', email, '--name', 'G', '--role', 'member']),
      /workspace not found/,
    );
  });

  it('creates keys for owners and members, refuses guests and non-members', async () => {
    const ws = await createWorkspace();
    const member = await adminCli(['member', 'add', '--workspace', ws.workspace.id, '--email', `m-${unique}@example.com`, '--name', 'M', '--role', 'member']);
    const guest = await adminCli(['member', 'add', '--workspace', ws.workspace.id, '--email', `g-${unique}@example.com`, '--name', 'G', '--role', 'guest']);
    const memberId = (member.json.member as { userId: string }).userId;
    const guestId = (guest.json.member as { userId: string }).userId;

    const created = await adminCli(['apikey', 'create', '--workspace', ws.workspace.id, '--user', memberId, '--name', 'CI key']);
    expect(created.code).toBe(0);
    expect(created.json).toEqual({
      apiKey: { id: expect.stringMatching(uuid), name: 'CI key', key: expect.stringMatching(/^tws_[0-9A-Za-z]{40}$/) },
    });
    expect(await keyWorks((created.json.apiKey as { key: string }).key)).toBe(true);

    expectFailure(
      await adminCli(['apikey', 'create', '--workspace', ws.workspace.id, '--user', guestId, '--name', 'Nope']),
      /^guests cannot create API keys$/,
    );
    const other = await createWorkspace();
    expectFailure(
      await adminCli(['apikey', 'create', '--workspace', ws.workspace.id, '--user', other.owner.userId, '--name', 'Nope']),
      /not a member/,
    );
    expectUsageError(await adminCli(['apikey', 'create', '--workspace', ws.workspace.id, '--user', 'bob', '--name', 'K']), /--user/);
    expectUsageError(await adminCli(['apikey', 'create', '--workspace', ws.workspace.id, '--user', memberId]), /--name/);
  });

  it('revokes a key, which then stops working; other keys keep working', async () => {
    const ws = await createWorkspace();
    const extra = await adminCli(['apikey', 'create', '--workspace', ws.workspace.id, '--user', ws.owner.userId, '--name', 'Second']);
    const second = extra.json.apiKey as { id: string; key: string };

    const revoked = await adminCli(['apikey', 'revoke', '--workspace', ws.workspace.id, '--id', ws.apiKey.id]);
    expect(revoked.code).toBe(0);
    expect(revoked.json).toEqual({ apiKey: { id: ws.apiKey.id, revoked: true } });
    expect(await keyWorks(ws.apiKey.key)).toBe(false);
    expect(await keyWorks(second.key)).toBe(true);

    // A key of another workspace cannot be revoked through this one.
    const other = await createWorkspace();
    expectFailure(await adminCli(['apikey', 'revoke', '--workspace', other.workspace.id, '--id', second.id]), /not found/);
    expect(await keyWorks(second.key)).toBe(true);
    expectUsageError(await adminCli(['apikey', 'revoke', '--workspace', ws.workspace.id]), /--id/);
  });
});

describe('admin CLI: token issue', () => {
  it('signs an EdDSA JWT the gateway trusts, with sub, scope, iss, aud and a one-hour default ttl', async () => {
    const ws = await createWorkspace();
    const result = await adminCli(['token', 'issue', '--workspace', ws.workspace.id, '--user', ws.owner.userId, '--scope', 'read write']);
    expect(result.code).toBe(0);
    expect(Object.keys(result.json)).toEqual(['token']);
    const key = await importSPKI(stack.devJwtPublicKeyPem, 'EdDSA');
    const { payload, protectedHeader } = await jwtVerify(String(result.json.token), key, {
      issuer: 'task-workspace-devstack',
      audience: 'task-workspace-api',
    });
    expect(protectedHeader.alg).toBe('EdDSA');
    expect(payload).toMatchObject({ sub: ws.owner.userId, scope: 'read write' });
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(30);
  });

  it('takes --ttl and refuses unknown scopes and missing options', async () => {
    const ws = await createWorkspace();
    const short = await adminCli(['token', 'issue', '--workspace', ws.workspace.id, '--user', ws.owner.userId, '--scope', 'read', '--ttl', '60']);
    expect(short.code).toBe(0);
    const claims = decodeJwt(String(short.json.token));
    expect(claims.exp! - claims.iat!).toBe(60);
    expect(claims.scope).toBe('read');

    const base = ['token', 'issue', '--workspace', ws.workspace.id, '--user', ws.owner.userId];
    expectUsageError(await adminCli([...base, '--scope', 'admin']), /--scope/);
    expectUsageError(await adminCli([...base, '--scope', 'read delete']), /--scope/);
    expectUsageError(await adminCli([...base, '--scope', 'read', '--ttl', 'soon']), /--ttl/);
    expectUsageError(await adminCli(['token', 'issue', '--workspace', ws.workspace.id, '--scope', 'read']), /--user/);
  });
});

describe('admin CLI: failures', () => {
  it('reports an unreachable tasks service as {"error"} with exit code 1', async () => {
    const result = await promisify(execFile)(process.execPath, [adminCliPath, 'workspace', 'create', '--name', 'Nowhere'], {
      env: { ...process.env, TASKS_GRPC_TARGET: '127.0.0.1:1' },
    }).then(
      () => ({ code: 0, stdout: '' }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code ?? -1, stdout: error.stdout ?? '' }),
    );
    expect(result.code).toBe(1);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(result.stdout)).toEqual({ error: expect.stringContaining('unavailable at 127.0.0.1:1') });
  });
});
