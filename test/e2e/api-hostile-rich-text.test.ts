import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import { createProject, createTask, expectError, expectStatus, getTask, keyOf, patchTask, type ListedTask, type RichTextNode } from '../support/fixtures.js';
import { descriptionOfBytes, maxRenderedBytes } from '../support/rich-text.js';

/*
 * Issue 14, findings 1 and 5: one ~100 KB Markdown description exhausted the tasks service's 128 MB
 * heap (the local stack runs it with the images' NODE_OPTIONS, --max-old-space-size=128), and ~40
 * large descriptions pushed a project's list past gRPC's 32 MiB message limit for good.
 */

const tasksOps = (): string => {
  const tasks = inject('stack').services.find((service) => service.name === 'tasks');
  if (!tasks) throw new Error('no tasks service in the stack');
  return tasks.opsUrl;
};

/** The tasks process's start time (prom-client's default metric): unchanged while the same process runs. */
async function tasksProcessStart(): Promise<string> {
  const metrics = await (await fetch(`${tasksOps()}/metrics`)).text();
  const line = metrics.split('\n').find((entry) => entry.startsWith('process_start_time_seconds'));
  if (line === undefined) throw new Error('tasks /metrics has no process_start_time_seconds');
  return line;
}

describe('hostile rich text (issue 14)', () => {
  let ws: TestWorkspace;
  let key: Credentials;

  beforeAll(async () => {
    ws = await createWorkspace({ plan: 'pro' });
    key = keyOf(ws);
  });

  const bombs = {
    '"# a\\n" x 24 997': '# a\n'.repeat(24_997),
    '"a\\n\\n" x 33 000': 'a\n\n'.repeat(33_000),
    '"- a\\n" x 24 997': '- a\n'.repeat(24_997),
  };

  for (const [name, markdown] of Object.entries(bombs)) {
    it(`${name} as a description and as a comment: 400, and the tasks service stays up`, async () => {
      const started = await tasksProcessStart();
      const project = await createProject(key);
      const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
      const patched = await api('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body: { description: markdown } });
      expectError(patched, 400);
      expect(patched.body).toEqual({ error: expect.stringMatching(/^description has too many lines to parse \(max 10000, /) });
      const commented = await api('POST', `/v1/tasks/${task.id}/comments`, { credentials: key, body: { text: markdown } });
      expectError(commented, 400);

      expect(await tasksProcessStart()).toBe(started);
      expect((await fetch(`${tasksOps()}/healthz`)).status).toBe(200);
      expect((await getTask(key, task.id)).description).toBeNull();
      expect((await patchTask(key, task.id, { description: '# Plan\n\n- one\n- two' })).description).toHaveLength(2);
    });
  }

  it('Markdown that converts to more than 10 000 nodes is refused like a node array (it was stored)', async () => {
    const project = await createProject(key);
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    const response = await api('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body: { description: 'a **b** c\n\n'.repeat(3_334) } });
    expectError(response, 400);
    expect(response.body).toEqual({ error: 'description has too many nodes (max 10000)' });
    // The line budget's largest heading count: 2 000 headings, 4 000 nodes.
    const headings = Array.from({ length: 2_000 }, () => '# a').join('\n');
    expect((await patchTask(key, task.id, { description: headings })).description).toHaveLength(2_000);
  });

  it(`the largest accepted description (${maxRenderedBytes} bytes of rich-text JSON) is stored and read back; one byte more is a 400 that says the limit`, async () => {
    const project = await createProject(key);
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    const tooLarge = await api('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body: { description: descriptionOfBytes(maxRenderedBytes + 1) } });
    expectError(tooLarge, 400);
    expect(tooLarge.body).toEqual({ error: `description is too large: ${maxRenderedBytes + 1} bytes as rich-text JSON (max ${maxRenderedBytes})` });

    const largest = descriptionOfBytes(maxRenderedBytes);
    expectStatus(await api('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body: { description: largest } }), 200);
    const stored = (await getTask(key, task.id)).description!;
    expect(Buffer.byteLength(JSON.stringify(stored))).toBe(maxRenderedBytes);
    expect((stored[0]!.children![0] as { text: string }).text).toBe((largest[0]!.children![0] as { text: string }).text);
  });

  it('a project list over 32 MiB answers 200 with the whole, correct array (it answered 429 for good), and so do its tasks read concurrently', { timeout: 600_000 }, async () => {
    const project = await createProject(key);
    // About 1 MB of rich-text JSON each (1.15 MB as Postgres renders it in the list): 34 make ~39 MB.
    const description = descriptionOfBytes(maxRenderedBytes - 1_000);
    const created: string[] = [];
    for (let index = 0; index < 34; index++) {
      const task = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: `Large ${index}` });
      (description[0]!.children![0] as { text: string }).text = `#${index} ${'€'.repeat(14_000)}`;
      expectStatus(await api('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body: { description } }), 200);
      created.push(task.id);
    }
    const small = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'Small' });
    created.push(small.id);

    const started = await tasksProcessStart();
    for (let read = 0; read < 2; read++) {
      const response = await api<ListedTask[]>('GET', `/v1/projects/${project.id}/tasks`, { credentials: key });
      expectStatus(response, 200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Buffer.byteLength(response.text)).toBeGreaterThan(32 * 1024 * 1024);
      expect(response.body.map((task) => task.id)).toEqual(created);
      expect(response.body.map((task) => task.name)).toEqual([...Array.from({ length: 34 }, (_, index) => `Large ${index}`), 'Small']);
      response.body.slice(0, 34).forEach((task, index) => {
        const first = task.description![0]!.children!;
        expect(first).toHaveLength(9_999);
        expect(first[0]).toEqual({ type: 'text', text: `#${index} ${'€'.repeat(14_000)}`, bold: true, italic: true, strikethrough: true, code: true, children: [] });
      });
      expect(response.body[34]!.description).toBeNull();
    }

    // Read one by one but concurrently, the gateway batches them into GetTasks calls: ~40 MB of
    // tasks, answered in byte-bounded parts.
    const single = await Promise.all(created.map((id) => api<{ id: string; description: RichTextNode[] | null }>('GET', `/v1/tasks/${id}`, { credentials: key })));
    expect(single.map((response) => response.status)).toEqual(created.map(() => 200));
    expect(single.map((response) => response.body.id)).toEqual(created);
    single.slice(0, 34).forEach((response, index) => {
      expect((response.body.description![0]!.children![0] as { text: string }).text).toBe(`#${index} ${'€'.repeat(14_000)}`);
    });
    expect(await tasksProcessStart()).toBe(started);
  });
});
