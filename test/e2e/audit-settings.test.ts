import * as grpc from '@grpc/grpc-js';
import { actorMetadataKey, callUnary, type AuditActor } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace } from '../support/admin.js';
import { api } from '../support/api.js';
import { createProject, createTask, keyOf } from '../support/fixtures.js';

/**
 * The audit trail of the workspace settings (API keys, members) as the web app calls them: tasks.v1
 * SettingsService over real gRPC with the person as `x-tws-actor-bin` metadata (what the web app's
 * interceptor sends), read back through the gateway's GET /v1/audit.
 */
const stack = inject('stack');
const settings = new (loadTasksProto().tasks.v1.SettingsService)(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
const labels = new (loadTasksProto().tasks.v1.LabelsService)(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
afterAll(() => {
  settings.close();
  labels.close();
});

interface AuditEntry {
  action: string;
  actor: AuditActor;
  resource: { type: string; id: string };
  changes: string[];
}

/** Metadata as the web app's client sends it while a signed-in person acts. */
function asPerson(userId: string): { metadata: grpc.Metadata; deadlineMs: number } {
  const metadata = new grpc.Metadata();
  metadata.set(actorMetadataKey, Buffer.from(JSON.stringify({ type: 'user', id: userId, name: null })));
  return { metadata, deadlineMs: 20_000 };
}

describe('audit of the workspace settings (web app path)', () => {
  it('API key creation and revocation, member addition, role change and removal (with the unassigned task) name the acting person', async () => {
    const ws = await createWorkspace();
    const acting = { workspaceId: ws.workspace.id, userId: ws.owner.userId };
    const as = asPerson(ws.owner.userId);
    const key = keyOf(ws);

    const created = await callUnary(settings, settings.CreateApiKey, { acting, name: 'From the app' }, as);
    const keyId = created.apiKey!.id;
    await callUnary(settings, settings.RevokeApiKey, { acting, id: keyId }, as);
    const added = await callUnary(settings, settings.AddWorkspaceMember, { acting, email: `audit-${process.pid}-${Date.now()}@example.com`, role: 'ROLE_MEMBER' }, as);
    const memberId = added.member!.member!.userId;
    await callUnary(settings, settings.ChangeMemberRole, { acting, userId: memberId, role: 'ROLE_GUEST' }, as);
    const project = await createProject(key);
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId, assigneeId: memberId });
    await callUnary(settings, settings.RemoveMember, { acting, userId: memberId }, as);
    // A refused change (the last owner cannot be demoted) leaves no entry.
    await expect(callUnary(settings, settings.ChangeMemberRole, { acting, userId: ws.owner.userId, role: 'ROLE_MEMBER' }, as)).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
    });

    const response = await api<AuditEntry[]>('GET', '/v1/audit?limit=200', { credentials: key });
    expect(response.status, response.text).toBe(200);
    const person = { type: 'user', id: ws.owner.userId, name: null };
    const one = (action: string, id: string): AuditEntry => {
      const found = response.body.filter((entry) => entry.action === action && entry.resource.id === id);
      expect(found, `${action} ${id}`).toHaveLength(1);
      return found[0]!;
    };
    expect(one('apiKey.created', keyId).actor).toEqual(person);
    expect(one('apiKey.revoked', keyId).actor).toEqual(person);
    expect(one('member.added', memberId)).toMatchObject({ actor: person, changes: ['role'] });
    expect(one('member.role_changed', memberId)).toMatchObject({ actor: person, changes: ['role'] });
    expect(one('member.removed', memberId).actor).toEqual(person);
    // Removing the member unassigned their task: a task change of its own, by the same person.
    expect(one('task.updated', task.id)).toMatchObject({ actor: person, changes: ['assigneeId'] });
    expect(response.body.filter((entry) => entry.action === 'member.role_changed')).toHaveLength(1);
  });

  it('labels: created, changed (field names), put on a task (task.updated ["labels"]) and deleted, by the person', async () => {
    const ws = await createWorkspace();
    const acting = { workspaceId: ws.workspace.id, userId: ws.owner.userId };
    const as = asPerson(ws.owner.userId);
    const key = keyOf(ws);
    const project = await createProject(key);
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    const label = (await callUnary(labels, labels.CreateLabel, { acting, name: 'Urgent', color: '#FF0000' }, as)).label!;
    await callUnary(labels, labels.UpdateLabel, { acting, id: label.id, color: '#00FF00' }, as);
    await callUnary(labels, labels.AddTaskLabel, { acting, taskId: task.id, labelId: label.id }, as);
    // Already on: a no-op, no entry.
    await callUnary(labels, labels.AddTaskLabel, { acting, taskId: task.id, labelId: label.id }, as);
    await callUnary(labels, labels.DeleteLabel, { acting, id: label.id }, as);

    const response = await api<AuditEntry[]>('GET', '/v1/audit?limit=200', { credentials: key });
    expect(response.status, response.text).toBe(200);
    const person = { type: 'user', id: ws.owner.userId, name: null };
    const entries = (action: string, id: string) => response.body.filter((entry) => entry.action === action && entry.resource.id === id);
    expect(entries('label.created', label.id)).toMatchObject([{ actor: person, changes: [] }]);
    expect(entries('label.updated', label.id)).toMatchObject([{ actor: person, changes: ['color'] }]);
    expect(entries('label.deleted', label.id)).toMatchObject([{ actor: person }]);
    expect(entries('task.updated', task.id)).toMatchObject([{ actor: person, changes: ['labels'] }]);
  });
});
