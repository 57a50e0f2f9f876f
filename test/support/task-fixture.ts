import { beforeAll } from 'vitest';
import { createWorkspace, type TestWorkspace } from './admin.js';
import type { Credentials } from './api.js';
import {
  addMember,
  createProject,
  createSection,
  createTask,
  getStatuses,
  getTask,
  keyOf,
  listTasks,
  type CreatedProject,
  type ListedTask,
  type Member,
  type Status,
  type Task,
} from './fixtures.js';

/**
 * The set-up the task API suites (test/e2e/api-tasks, api-task-updates, api-task-descriptions)
 * share: a pro workspace with a member, its statuses, a project with a second section, and
 * another project of the same workspace.
 */
export interface TaskFixture {
  ws: TestWorkspace;
  key: Credentials;
  member: Member;
  todo: Status;
  done: Status;
  custom: Status;
  /** The project most tests work in, with a second section. */
  project: CreatedProject;
  secondSectionId: string;
  /** Another project of the same workspace. */
  otherProject: CreatedProject;
  /** A new task in the main project's default section (or `listId`), as GET /v1/tasks/:id shows it. */
  freshTask(listId?: string): Promise<Task>;
  /** The task as GET /v1/projects/:projectId/tasks lists it. */
  listed(projectId: string, id: string): Promise<ListedTask | undefined>;
}

/**
 * Registers, in the calling `describe` block, the `beforeAll` that builds the workspace, and returns
 * the fixture it fills in (its fields are set once that hook ran).
 */
export function taskFixture(): TaskFixture {
  const fx = {
    async freshTask(listId = fx.project.defaultListId): Promise<Task> {
      return getTask(fx.key, (await createTask(fx.key, { projectId: fx.project.id, listId })).id);
    },
    async listed(projectId: string, id: string): Promise<ListedTask | undefined> {
      return (await listTasks(fx.key, projectId)).find((task) => task.id === id);
    },
  } as TaskFixture;

  beforeAll(async () => {
    fx.ws = await createWorkspace({ plan: 'pro' });
    fx.key = keyOf(fx.ws);
    fx.member = await addMember(fx.ws.workspace.id, 'member');
    ({ todo: fx.todo, done: fx.done, custom: fx.custom } = await getStatuses(fx.key));
    fx.project = await createProject(fx.key);
    fx.secondSectionId = (await createSection(fx.key, fx.project.id, 'In progress')).id;
    fx.otherProject = await createProject(fx.key);
  });
  return fx;
}

/** The list shape of a task read in the single shape. */
export const listShape = ({ projectId: _projectId, labels: _labels, ...rest }: Task, order: number): ListedTask => ({ ...rest, order });
