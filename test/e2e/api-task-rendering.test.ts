import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import { createProject, createSection, createTask, expectStatus, getTask, keyOf, listTasks, patchTask, TIMESTAMP, type Task } from '../support/fixtures.js';

/*
 * GET /v1/tasks/:id and GET /v1/projects/:id/tasks are rendered as JSON by Postgres in the tasks
 * service and passed through the gateway byte for byte. These tests hold that rendering to the
 * contract: exact key sets and order, escaping of awkward text, labels, timestamps, headers.
 */
describe('task JSON rendered by the tasks service', () => {
  let ws: TestWorkspace;
  let key: Credentials;
  let db: pg.Client;

  beforeAll(async () => {
    ws = await createWorkspace({ plan: 'pro' });
    key = keyOf(ws);
    db = new pg.Client({ connectionString: inject('stack').databaseUrl, options: '-c search_path=tasks' });
    await db.connect();
  });
  afterAll(async () => db.end());

  it('answers application/json; charset=utf-8 with the keys in the documented order', async () => {
    const project = await createProject(key);
    const { id } = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    const single = await api<Task>('GET', `/v1/tasks/${id}`, { credentials: key });
    expectStatus(single, 200);
    expect(single.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Object.keys(single.body)).toStrictEqual([
      'id', 'number', 'name', 'isCompleted', 'description', 'listId', 'assigneeId', 'statusId', 'createdAt', 'projectId', 'labels', 'updatedAt',
    ]);
    const list = await api<Array<Record<string, unknown>>>('GET', `/v1/projects/${project.id}/tasks`, { credentials: key });
    expectStatus(list, 200);
    expect(list.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Object.keys(list.body[0]!)).toStrictEqual([
      'id', 'number', 'name', 'isCompleted', 'description', 'listId', 'assigneeId', 'statusId', 'order', 'createdAt', 'updatedAt',
    ]);
  });

  it('escapes quotes, backslashes, control characters and non-BMP text exactly as JSON.parse expects', async () => {
    const project = await createProject(key);
    const name = 'Quote " backslash \\ tab\t slash / emoji 🧪 accents é ü ✓ </script>';
    const { id } = await createTask(key, { projectId: project.id, listId: project.defaultListId, name });
    const description = 'A line with "quotes", a \\ backslash and 🧪\n\nSecond paragraph with `code` and ~~strike~~';
    await patchTask(key, id, { description });
    const task = await getTask(key, id);
    expect(task.name).toBe(name);
    expect(JSON.stringify(task.description)).toContain('A line with \\"quotes\\", a \\\\ backslash and 🧪');
    const [listed] = await listTasks(key, project.id);
    expect(listed).toMatchObject({ id, name, description: task.description });
  });

  it('renders labels sorted by name then id, createdAt with milliseconds in UTC, and null for an empty description', async () => {
    const project = await createProject(key);
    const { id } = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    // Labels are read-only through the API: written here as another tool of the tasks context would.
    const { rows } = await db.query<{ id: string; name: string; color: string }>(
      `INSERT INTO labels (workspace_id, name, color) VALUES ($1, 'zeta', '#00FF00'), ($1, 'alpha', '#FF0000'), ($1, 'beta "quoted"', '#0000ff')
       RETURNING id, name, color`,
      [ws.workspace.id],
    );
    await db.query('INSERT INTO task_labels (task_id, label_id) SELECT $1, unnest($2::uuid[])', [id, rows.map((row) => row.id)]);
    await db.query(`UPDATE tasks SET description = '[]'::jsonb, created_at = '2026-03-04 05:06:07.891234+02' WHERE id = $1`, [id]);

    const task = await getTask(key, id);
    const byName = (name: string) => rows.find((row) => row.name === name)!;
    expect(task.labels).toStrictEqual([byName('alpha'), byName('beta "quoted"'), byName('zeta')]);
    expect(task.createdAt).toBe('2026-03-04T03:06:07.891Z');
    expect(task.createdAt).toMatch(TIMESTAMP);
    expect(task.description).toBeNull();
    const [listed] = await listTasks(key, project.id);
    expect(listed).toMatchObject({ createdAt: '2026-03-04T03:06:07.891Z', description: null });
    expect(listed).not.toHaveProperty('labels');
  });

  it('lists an empty project as [] and orders tasks by section position, then task position', async () => {
    const project = await createProject(key);
    expect(await listTasks(key, project.id)).toStrictEqual([]);
    const later = await createSection(key, project.id, 'Later');
    const inLater = await createTask(key, { projectId: project.id, listId: later.id });
    const first = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    const second = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    const ids = (await listTasks(key, project.id)).map((task) => task.id);
    expect(ids).toStrictEqual([first.id, second.id, inLater.id]);
  });

  it('serves concurrent reads of two workspaces (batched together) each from its own workspace only', async () => {
    const other = await createWorkspace({ plan: 'pro' });
    const otherKey = keyOf(other);
    const mine = await createProject(key);
    const theirs = await createProject(otherKey);
    const myTasks = await Promise.all([1, 2, 3].map(() => createTask(key, { projectId: mine.id, listId: mine.defaultListId })));
    const theirTasks = await Promise.all([1, 2, 3].map(() => createTask(otherKey, { projectId: theirs.id, listId: theirs.defaultListId })));
    const reads = [
      ...myTasks.map((task) => ({ credentials: key, id: task.id, expected: 200 })),
      ...theirTasks.map((task) => ({ credentials: otherKey, id: task.id, expected: 200 })),
      ...theirTasks.map((task) => ({ credentials: key, id: task.id, expected: 404 })),
      ...myTasks.map((task) => ({ credentials: otherKey, id: task.id, expected: 404 })),
    ];
    const responses = await Promise.all(
      [...reads, ...reads].map(async (read) => ({ read, response: await api<Task | { error: string }>('GET', `/v1/tasks/${read.id}`, { credentials: read.credentials }) })),
    );
    for (const { read, response } of responses) {
      expectStatus(response, read.expected);
      expect(response.body).toStrictEqual(read.expected === 200 ? expect.objectContaining({ id: read.id }) : { error: 'task not found' });
    }
  });

  it('lists reflect every write at once, although the gateway serves its kept copy while nothing changed', async () => {
    const project = await createProject(key);
    const later = await createSection(key, project.id, 'Later');
    const listed = async () => listTasks(key, project.id);
    const first = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'one' });
    expect((await listed()).map((task) => task.name)).toStrictEqual(['one']);
    expect((await listed()).map((task) => task.name)).toStrictEqual(['one']);
    const second = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'two' });
    expect((await listed()).map((task) => task.name)).toStrictEqual(['one', 'two']);
    await patchTask(key, first.id, { name: 'one, renamed' });
    expect((await listed()).map((task) => task.name)).toStrictEqual(['one, renamed', 'two']);
    await patchTask(key, first.id, { listId: later.id });
    expect((await listed()).map((task) => [task.name, task.listId])).toStrictEqual([['two', project.defaultListId], ['one, renamed', later.id]]);
    await patchTask(key, second.id, { isCompleted: true, description: 'done **now**' });
    expect((await listed())[0]).toMatchObject({ id: second.id, isCompleted: true, description: expect.any(Array) });
    expectStatus(await api('DELETE', `/v1/tasks/${second.id}`, { credentials: key }), 204);
    expect((await listed()).map((task) => task.id)).toStrictEqual([first.id]);
    // A write outside the API (another tool of the tasks context) is seen too.
    await db.query('UPDATE tasks SET name = $2 WHERE id = $1', [first.id, 'renamed in SQL']);
    expect((await listed()).map((task) => task.name)).toStrictEqual(['renamed in SQL']);
  });
});

