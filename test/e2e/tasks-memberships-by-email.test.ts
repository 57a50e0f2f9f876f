import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { adminCli } from '../support/admin.js';

/**
 * tasks.v1.TasksService/ListMembershipsByEmail through the real tasks service: what the
 * people-facing app (services/web) asks at sign-in and on every page.
 */
const stack = inject('stack');
const tasks = new (loadTasksProto().tasks.v1.TasksService)(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
afterAll(() => tasks.close());

const unique = `${process.pid}-${Date.now()}`;
const listMemberships = (email: string) => callUnary(tasks, tasks.ListMembershipsByEmail, { email });

async function admin(args: string[]): Promise<Record<string, unknown>> {
  const result = await adminCli(args);
  if (result.code !== 0) throw new Error(`admin ${args.join(' ')} failed: ${JSON.stringify(result.json)} ${result.stderr}`);
  return result.json;
}

async function workspaceOwnedBy(name: string, email: string): Promise<{ id: string; urlId: string; name: string }> {
  const created = await admin(['workspace', 'create', '--name', name, '--owner-email', email]);
  return created.workspace as { id: string; urlId: string; name: string };
}

describe('ListMembershipsByEmail', () => {
  it('answers every workspace of the person, with their role, sorted by name, whatever the case of the email', async () => {
    const email = `ada-${unique}@example.com`;
    const zulu = await workspaceOwnedBy(`zulu Works ${unique}`, email);
    const alpha = await workspaceOwnedBy(`Alpha Labs ${unique}`, `someone-else-${unique}@example.com`);
    await admin(['member', 'add', '--workspace', alpha.id, '--email', email.toUpperCase(), '--name', 'Ada', '--role', 'guest']);
    const middle = await workspaceOwnedBy(`Middle ${unique}`, `third-${unique}@example.com`);
    await admin(['member', 'add', '--workspace', middle.id, '--email', email, '--name', 'Ada', '--role', 'member']);

    const { memberships } = await listMemberships(`  Ada-${unique}@Example.COM `);
    expect(memberships.map((membership) => [membership.workspace?.urlId, membership.role])).toEqual([
      [alpha.urlId, 'ROLE_GUEST'],
      [middle.urlId, 'ROLE_MEMBER'],
      [zulu.urlId, 'ROLE_OWNER'],
    ]);
    const userIds = new Set(memberships.map((membership) => membership.userId));
    expect(userIds.size).toBe(1);
    expect(memberships[0]?.workspace).toMatchObject({ id: alpha.id, name: alpha.name, urlId: alpha.urlId, plan: 'PLAN_FREE' });
  });

  it('answers nothing for an email no member has', async () => {
    expect((await listMemberships(`nobody-${unique}@example.com`)).memberships).toEqual([]);
  });

  it.each([
    ['not an email', 'not-an-email', /email must be a valid email address/],
    ['empty', '', /email must be a valid email address/],
    ['over 320 characters', `${'a'.repeat(320)}@example.com`, /at most 320 characters/],
  ])('refuses an email that is %s with INVALID_ARGUMENT', async (_label, email, message) => {
    const failure = await listMemberships(email).catch((error: unknown) => error as grpc.ServiceError);
    expect(failure).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    expect((failure as grpc.ServiceError).details).toMatch(message);
  });
});
