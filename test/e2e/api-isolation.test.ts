import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, issueToken, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import {
  addMember,
  createComment,
  createProject,
  createSection,
  createTask,
  expectError,
  expectStatus,
  getStatuses,
  getTask,
  keyOf,
  listMembers,
  listProjects,
  listSections,
  listTasks,
  patchTask,
  type CreatedProject,
  type CreatedTask,
  type Member,
  type Status,
} from '../support/fixtures.js';

/**
 * Workspace A tries every id-bearing endpoint with ids of workspace B: each answers 404 (or 400 for
 * ids that are only references inside A's own resources), and B's data reads back unchanged.
 */
describe('isolation between workspaces', () => {
  let a: TestWorkspace;
  let b: TestWorkspace;
  let keyA: Credentials;
  let keyB: Credentials;
  let projectA: CreatedProject;
  let taskA: CreatedTask;
  let projectB: CreatedProject;
  let sectionB: string;
  let taskB: CreatedTask;
  let memberB: Member;
  let doneB: Status;

  const stateOfB = async () => ({
    projects: await listProjects(keyB),
    sections: await listSections(keyB, projectB.id),
    tasks: await listTasks(keyB, projectB.id),
    task: await getTask(keyB, taskB.id),
  });
  let initialB: Awaited<ReturnType<typeof stateOfB>>;

  beforeAll(async () => {
    [a, b] = await Promise.all([createWorkspace(), createWorkspace()]);
    keyA = keyOf(a);
    keyB = keyOf(b);
    projectA = await createProject(keyA, { name: 'A project' });
    taskA = await createTask(keyA, { projectId: projectA.id, listId: projectA.defaultListId, name: 'A task' });

    memberB = await addMember(b.workspace.id, 'member');
    doneB = (await getStatuses(keyB)).done;
    projectB = await createProject(keyB, { name: 'B project', description: 'B only' });
    sectionB = (await createSection(keyB, projectB.id, 'B section')).id;
    taskB = await createTask(keyB, { projectId: projectB.id, listId: projectB.defaultListId, name: 'B task', assigneeId: memberB.userId });
    await patchTask(keyB, taskB.id, { description: '**B** secret notes' });
    initialB = await stateOfB();
  });

  const attacks: Array<[string, string, () => string, () => unknown]> = [
    ['PATCH', 'a project', () => `/v1/projects/${projectB.id}`, () => ({ name: 'Taken over' })],
    ['GET', 'the sections of a project', () => `/v1/projects/${projectB.id}/sections`, () => undefined],
    ['PATCH', 'a section', () => `/v1/sections/${sectionB}`, () => ({ name: 'Taken over' })],
    ['GET', 'the tasks of a project', () => `/v1/projects/${projectB.id}/tasks`, () => undefined],
    ['GET', 'a task', () => `/v1/tasks/${taskB.id}`, () => undefined],
    ['PATCH', 'a task', () => `/v1/tasks/${taskB.id}`, () => ({ name: 'Taken over', isCompleted: true })],
    ['DELETE', 'a task', () => `/v1/tasks/${taskB.id}`, () => undefined],
    ['POST', 'a comment on a task', () => `/v1/tasks/${taskB.id}/comments`, () => ({ text: 'Taken over' })],
    ['POST', 'a task in a project (projectId)', () => '/v1/tasks', () => ({ projectId: projectB.id, listId: projectB.defaultListId, name: 'Planted' })],
    ['POST', 'a section in a project (projectId)', () => '/v1/sections', () => ({ projectId: projectB.id, name: 'Planted' })],
  ];

  it.each(attacks)('%s on %s of another workspace answers 404 and changes nothing', async (method, _what, path, body) => {
    expectError(await api(method, path(), { credentials: keyA, body: body() }), 404);
    expect(await stateOfB()).toStrictEqual(initialB);
  });

  it('DELETE of a comment of another workspace answers 404 and the comment stays', async () => {
    const comment = await createComment(keyB, taskB.id, 'B comment');
    expectError(await api('DELETE', `/v1/comments/${comment.id}`, { credentials: keyA }), 404);
    // Still there: its own workspace can delete it exactly once.
    expectStatus(await api('DELETE', `/v1/comments/${comment.id}`, { credentials: keyB }), 204);
  });

  it('the same holds for a Bearer token of a member of the other workspace', async () => {
    const token = await issueToken(a.workspace.id, a.owner.userId, 'read write');
    const credentials: Credentials = { bearer: token, workspaceId: a.workspace.id };
    expectError(await api('GET', `/v1/tasks/${taskB.id}`, { credentials }), 404);
    expectError(await api('PATCH', `/v1/tasks/${taskB.id}`, { credentials, body: { name: 'Taken over' } }), 404);
    expectError(await api('DELETE', `/v1/tasks/${taskB.id}`, { credentials }), 404);
    expect(await stateOfB()).toStrictEqual(initialB);
  });

  it('lists never show the other workspace', async () => {
    expect((await listProjects(keyA)).map((project) => project.id)).toStrictEqual([projectA.id]);
    expect((await listMembers(keyA)).map((m) => m.userId)).toStrictEqual([a.owner.userId]);
  });

  describe("references to the other workspace inside one's own resources answer 400", () => {
    const ownTaskUnchanged = async (check: () => Promise<void>) => {
      const before = await getTask(keyA, taskA.id);
      await check();
      expect(await getTask(keyA, taskA.id)).toStrictEqual(before);
      expect(await stateOfB()).toStrictEqual(initialB);
    };

    it("POST /v1/tasks in one's own project with the other workspace's section as listId", async () => {
      await ownTaskUnchanged(async () => {
        const before = await listTasks(keyA, projectA.id);
        expectError(await api('POST', '/v1/tasks', { credentials: keyA, body: { projectId: projectA.id, listId: sectionB, name: 'x' } }), 400);
        expect(await listTasks(keyA, projectA.id)).toStrictEqual(before);
      });
    });

    it("POST /v1/tasks assigned to a member of the other workspace", async () => {
      await ownTaskUnchanged(async () => {
        const body = { projectId: projectA.id, listId: projectA.defaultListId, name: 'x', assigneeId: memberB.userId };
        expectError(await api('POST', '/v1/tasks', { credentials: keyA, body }), 400);
      });
    });

    it.each([
      ['listId', () => ({ listId: sectionB })],
      ['statusId', () => ({ statusId: doneB.id })],
      ['assigneeId', () => ({ assigneeId: memberB.userId })],
    ])("PATCH of one's own task with the other workspace's %s", async (_field, body) => {
      await ownTaskUnchanged(async () => {
        expectError(await api('PATCH', `/v1/tasks/${taskA.id}`, { credentials: keyA, body: body() }), 400);
      });
    });
  });
});
