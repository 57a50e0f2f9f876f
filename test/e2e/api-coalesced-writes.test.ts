import { randomUUID } from 'node:crypto';
import { taskEventsTopic } from '@tws/contracts';
import { describe, expect, it } from 'vitest';
import { createWorkspace } from '../support/admin.js';
import { api } from '../support/api.js';
import { createProject, expectStatus, keyOf } from '../support/fixtures.js';
import { serviceLogLines } from '../support/service-logs.js';
import { kafkaClient } from '../support/webhooks/fixtures.js';

/**
 * Concurrent POST /v1/tasks and PATCH /v1/tasks/:id reach the tasks service as one CreateTasks /
 * UpdateTasks call (services/gateway/src/clients/task-writer.ts). Each request must still be its own:
 * its own answer, and its event on task-events.v1 with its own request id.
 */
const count = 12;

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
