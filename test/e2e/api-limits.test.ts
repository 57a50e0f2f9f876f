import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api, type ApiResponse, type Credentials } from '../support/api.js';
import {
  countStatuses,
  createApiKeys,
  createProject,
  expectError,
  expectStatus,
  keyOf,
  listProjects,
  listTasks,
  type CreatedProject,
  type CreatedTask,
} from '../support/fixtures.js';

/** Requests per API key in a burst, well inside one key's rate-limit burst. */
const PER_KEY = 100;

/** Fires `count` POST /v1/tasks at once, round-robin over the projects and over the keys. */
function createTasksAtOnce(keys: Credentials[], projects: CreatedProject[], count: number): Promise<Array<ApiResponse<CreatedTask>>> {
  return Promise.all(
    Array.from({ length: count }, (_, index) => {
      const project = projects[index % projects.length]!;
      return api<CreatedTask>('POST', '/v1/tasks', {
        credentials: keys[Math.floor(index / PER_KEY)]!,
        body: { projectId: project.id, listId: project.defaultListId, name: `Burst ${index}` },
      });
    }),
  );
}

/** Every project's task numbers are exactly 1..n: no gaps, no duplicates, none lost to refusals. */
async function expectDenseNumbers(credentials: Credentials, projects: CreatedProject[]): Promise<number> {
  let total = 0;
  for (const project of projects) {
    const numbers = (await listTasks(credentials, project.id)).map((task) => task.number).sort((x, y) => x - y);
    expect(numbers).toStrictEqual(Array.from({ length: numbers.length }, (_, index) => index + 1));
    total += numbers.length;
  }
  return total;
}

describe('free plan limits under concurrency', () => {
  let free: TestWorkspace;
  let keys: Credentials[];
  let projects: CreatedProject[];

  beforeAll(async () => {
    free = await createWorkspace({ plan: 'free' });
    keys = [keyOf(free), ...(await createApiKeys(free, 3))];
  });

  it('20 concurrent project creations: exactly 3 succeed, 17 get 403', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) => api<CreatedProject>('POST', '/v1/projects', { credentials: keys[0]!, body: { name: `Race ${index}` } })),
    );
    expect(countStatuses(responses)).toStrictEqual({ 201: 3, 403: 17 });
    for (const response of responses.filter((r) => r.status === 403)) expectError(response, 403);
    projects = responses.filter((r) => r.status === 201).map((r) => r.body);
    expect((await listProjects(keys[0]!)).map((project) => project.id).sort()).toStrictEqual(projects.map((p) => p.id).sort());
  });

  it('400 concurrent task creations: exactly 300 succeed, 100 get 403 {"error"}', async () => {
    const responses = await createTasksAtOnce(keys, projects, 400);
    expect(countStatuses(responses)).toStrictEqual({ 201: 300, 403: 100 });
    for (const response of responses.filter((r) => r.status === 403)) expectError(response, 403);
    expect(await expectDenseNumbers(keys[1]!, projects)).toBe(300);
  });

  it('deleting one task makes room for exactly one more', async () => {
    const project = projects[0]!;
    const [victim] = await listTasks(keys[2]!, project.id);
    expectError(await api('POST', '/v1/tasks', { credentials: keys[2]!, body: { projectId: project.id, listId: project.defaultListId, name: 'Full' } }), 403);
    expectStatus(await api('DELETE', `/v1/tasks/${victim!.id}`, { credentials: keys[2]! }), 204);
    const body = { projectId: project.id, listId: project.defaultListId, name: 'One more' };
    expectStatus(await api('POST', '/v1/tasks', { credentials: keys[2]!, body }), 201);
    expectError(await api('POST', '/v1/tasks', { credentials: keys[2]!, body }), 403);
    const total = (await Promise.all(projects.map((p) => listTasks(keys[2]!, p.id)))).reduce((sum, tasks) => sum + tasks.length, 0);
    expect(total).toBe(300);
  });
});

describe('pro plan', () => {
  it('has no task limit: 310 concurrent creations all succeed', async () => {
    const pro = await createWorkspace({ plan: 'pro' });
    const keys = [keyOf(pro), ...(await createApiKeys(pro, 3))];
    const projects = [];
    for (let index = 0; index < 4; index++) projects.push(await createProject(keys[0]!));
    const responses = await createTasksAtOnce(keys, projects, 310);
    expect(countStatuses(responses)).toStrictEqual({ 201: 310 });
    expect(await expectDenseNumbers(keys[3]!, projects)).toBe(310);
  });
});
