import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { callUnary, grpcClientOptions, isGrpcError } from '@tws/common';
import { taskEventsTopic } from '@tws/contracts';
import { loadTasksProto } from '@tws/proto-types';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace } from '../support/admin.js';
import { api } from '../support/api.js';
import { createProject, createTask, expectStatus, getTask, keyOf } from '../support/fixtures.js';
import { descriptionOfBytes, maxRenderedBytes } from '../support/rich-text.js';
import { serviceLogLines } from '../support/service-logs.js';
import { kafkaClient } from '../support/webhooks/fixtures.js';

/**
 * Concurrent POST /v1/tasks and PATCH /v1/tasks/:id reach the tasks service as one CreateTasks /
 * UpdateTasks call (services/gateway/src/clients/task-writer.ts). Each request must still be its own:
 * its own answer, and its event on task-events.v1 with its own request id.
 */
const count = 30;

/** The `request-id` header of each task event, by "<task id> <event>", until `expected` are seen (bounded). */
async function eventRequestIds(expected: number): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  const consumer = kafkaClient().consumer({ groupId: `coalesced-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: taskEventsTopic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`saw ${seen.size} of ${expected} events within 30 s`)), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          const payload = JSON.parse(message.value?.toString() ?? '{}') as { event?: string; data?: { name?: string } };
          const requestId = message.headers?.['request-id']?.toString();
          if (!payload.data?.name?.startsWith('coalesced ') || requestId === undefined) return;
          seen.set(`${message.key?.toString()} ${payload.event}`, requestId);
          if (seen.size >= expected) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

describe('coalesced task writes', () => {
  it('parallel creations and renames each get their own answer, and each event names its own request', async () => {
    const ws = await createWorkspace();
    const project = await createProject(keyOf(ws));
    const tag = randomUUID().slice(0, 8);
    const creations = await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const requestId = `e2e-create-${tag}-${index}`;
        const response = await api<{ id: string; number: number }>('POST', '/v1/tasks', {
          credentials: keyOf(ws),
          body: { projectId: project.id, listId: project.defaultListId, name: `coalesced ${tag} ${index}` },
          headers: { 'x-request-id': requestId },
        });
        expectStatus(response, 201);
        return { id: response.body.id, number: response.body.number, requestId };
      }),
    );
    expect(creations.map((created) => created.number).sort((a, b) => a - b)).toStrictEqual(Array.from({ length: count }, (_, index) => index + 1));

    const renames = await Promise.all(
      creations.map(async (created, index) => {
        const requestId = `e2e-rename-${tag}-${index}`;
        const response = await api<{ id: string; name: string }>('PATCH', `/v1/tasks/${created.id}`, {
          credentials: keyOf(ws),
          body: { name: `coalesced ${tag} renamed ${index}` },
          headers: { 'x-request-id': requestId },
        });
        expectStatus(response, 200);
        expect(response.body).toMatchObject({ id: created.id, name: `coalesced ${tag} renamed ${index}` });
        expect(response.headers.get('etag')).toMatch(/^"/);
        return { id: created.id, requestId };
      }),
    );

    const events = await eventRequestIds(2 * count);
    for (const created of creations) expect(events.get(`${created.id} task.created`)).toBe(created.requestId);
    for (const renamed of renames) expect(events.get(`${renamed.id} task.updated`)).toBe(renamed.requestId);
    // The burst did share calls: the tasks service logged coalesced calls for these requests.
    const ours = new Set([...creations, ...renames].map((entry) => entry.requestId));
    const coalesced = (await serviceLogLines('tasks')).filter((line) => ours.has(String(line.reqId)) && (line.method === 'CreateTasks' || line.method === 'UpdateTasks'));
    expect(coalesced.map((line) => line.code)).toContain('OK');
  });
});

describe('UpdateTasks bounds (the tasks service)', () => {
  // The gateway's client options: its 32 MiB receive limit is the bound a json_only answer must keep.
  const tasks = new (loadTasksProto().tasks.v1.TasksService)(inject('stack').tasksGrpcTarget, grpc.credentials.createInsecure(), grpcClientOptions('tasks.v1.TasksService'));
  afterAll(() => tasks.close());
  const updateTasks = (workspaceId: string, ids: string[], name: string, jsonOnly: boolean) =>
    callUnary(tasks, tasks.UpdateTasks, {
      items: ids.map((id, index) => ({ change: { workspaceId, id, name: `${name} ${index}` }, origin: { requestId: `bounds-${index}`, traceparent: '', actor: Buffer.alloc(0) } })),
      jsonOnly,
    });
  const statusOf = (call: Promise<unknown>) => call.then(() => 'OK', (error: unknown) => (isGrpcError(error) ? grpc.status[error.code] : String(error)));

  it('answers 24 changes with task_json only when asked; refuses a 25th, and a 9th without json_only, before writing anything', async () => {
    const ws = await createWorkspace();
    const project = await createProject(keyOf(ws));
    const ids: string[] = [];
    for (let n = 0; n < 25; n += 1) ids.push((await createTask(keyOf(ws), { projectId: project.id, listId: project.defaultListId })).id);

    expect(await statusOf(updateTasks(ws.workspace.id, ids, 'too many', true))).toBe('INVALID_ARGUMENT');
    expect(await statusOf(updateTasks(ws.workspace.id, ids.slice(0, 9), 'too many', false))).toBe('INVALID_ARGUMENT');
    expect((await getTask(keyOf(ws), ids[0]!)).name).not.toMatch(/^too many/);

    const { results } = await updateTasks(ws.workspace.id, ids.slice(0, 24), 'json only', true);
    expect(results).toHaveLength(24);
    for (const [index, result] of results.entries()) {
      expect(result.updated?.task ?? null).toBeNull();
      expect(result.updated?.entityTag).toMatch(/^"/);
      expect(JSON.parse(result.updated?.taskJson?.toString('utf8') ?? '{}')).toMatchObject({ id: ids[index], name: `json only ${index}` });
    }
    // Without json_only an answer still carries the task message (a gateway older than task_json reads it).
    const legacy = await updateTasks(ws.workspace.id, ids.slice(0, 8), 'legacy', false);
    expect(legacy.results.map((result) => result.updated?.task?.name)).toEqual(ids.slice(0, 8).map((_id, index) => `legacy ${index}`));
  });

  it('answers 24 changes of tasks with the largest description (the worst case) within the gateway\'s 32 MiB', async () => {
    const ws = await createWorkspace();
    const project = await createProject(keyOf(ws));
    const ids: string[] = [];
    for (let n = 0; n < 24; n += 1) ids.push((await createTask(keyOf(ws), { projectId: project.id, listId: project.defaultListId })).id);
    expectStatus(await api('PATCH', `/v1/tasks/${ids[0]}`, { credentials: keyOf(ws), body: { description: descriptionOfBytes(maxRenderedBytes) } }), 200);
    const db = new pg.Client({ connectionString: inject('stack').databaseUrl });
    await db.connect();
    try {
      await db.query('SET search_path TO tasks, public');
      await db.query('UPDATE tasks SET description = (SELECT description FROM tasks WHERE id = $1) WHERE id = ANY ($2::uuid[])', [ids[0], ids]);
    } finally {
      await db.end();
    }
    const { results } = await updateTasks(ws.workspace.id, ids, 'largest', true);
    const sizes = results.map((result) => result.updated?.taskJson?.length ?? 0);
    expect(Math.min(...sizes)).toBeGreaterThan(maxRenderedBytes);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBeLessThan(32 * 1024 * 1024);
  });
});
