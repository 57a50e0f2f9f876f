import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api } from '../support/api.js';
import {
  createComment,
  createProject,
  createSection,
  createTask,
  getStatuses,
  expectError,
  expectStatus,
  keyOf,
  listProjects,
  listSections,
  uniqueName,
  unknownId,
  type CreatedProject,
  type Project,
  type Section,
} from '../support/fixtures.js';

const TASK_PREFIX = /^[A-Z][A-Z0-9]*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

describe('projects', () => {
  let pro: TestWorkspace;

  beforeAll(async () => {
    pro = await createWorkspace({ plan: 'pro' });
  });

  const findProject = async (id: string): Promise<Project | undefined> => (await listProjects(keyOf(pro))).find((p) => p.id === id);

  it('POST /v1/projects answers 201 {id, defaultListId} and creates the default "To Do" section at order 0', async () => {
    const name = uniqueName('Website');
    const response = await api<CreatedProject>('POST', '/v1/projects', { credentials: keyOf(pro), body: { name } });
    expectStatus(response, 201);
    expect(response.body).toStrictEqual({ id: expect.any(String), defaultListId: expect.any(String) });
    const { id, defaultListId } = response.body;
    expect(defaultListId).not.toBe(id);

    const sections = await api<Section[]>('GET', `/v1/projects/${id}/sections`, { credentials: keyOf(pro) });
    expectStatus(sections, 200);
    expect(sections.body).toStrictEqual([{ id: defaultListId, name: 'To Do', order: 0, projectId: id }]);
  });

  it('GET /v1/projects lists a project without description as description null', async () => {
    const name = uniqueName('No description');
    const { id } = await createProject(keyOf(pro), { name });
    const response = await api<Project[]>('GET', '/v1/projects', { credentials: keyOf(pro) });
    expectStatus(response, 200);
    expect(response.body.find((project) => project.id === id)).toStrictEqual({
      id,
      name,
      description: null,
      taskPrefix: expect.stringMatching(TASK_PREFIX),
    });
  });

  it('GET /v1/projects lists the description given at creation', async () => {
    const name = uniqueName('Described');
    const { id } = await createProject(keyOf(pro), { name, description: 'Everything about the launch' });
    expect(await findProject(id)).toStrictEqual({
      id,
      name,
      description: 'Everything about the launch',
      taskPrefix: expect.stringMatching(TASK_PREFIX),
    });
  });

  it('gives every project an upper-case taskPrefix unique in the workspace, even for equal names', async () => {
    const created = [];
    for (const name of ['Marketing', 'Marketing', 'marketing', '2026 roadmap', 'Über Ärger ☃', 'x']) {
      created.push((await createProject(keyOf(pro), { name })).id);
    }
    const projects = await listProjects(keyOf(pro));
    for (const project of projects) expect(project.taskPrefix).toMatch(TASK_PREFIX);
    const prefixes = projects.map((project) => project.taskPrefix);
    expect(new Set(prefixes).size).toBe(prefixes.length);
    expect(projects.map((project) => project.id)).toEqual(expect.arrayContaining(created));
  });

  describe('PATCH /v1/projects/:id', () => {
    let project: Project;

    beforeAll(async () => {
      const name = uniqueName('Patched');
      const { id } = await createProject(keyOf(pro), { name, description: 'first' });
      project = (await findProject(id))!;
    });

    it('changes only the name and answers 200 {id}', async () => {
      const response = await api('PATCH', `/v1/projects/${project.id}`, { credentials: keyOf(pro), body: { name: 'Renamed project' } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ id: project.id });
      project = { ...project, name: 'Renamed project' };
      expect(await findProject(project.id)).toStrictEqual(project);
    });

    it('changes only the description', async () => {
      const response = await api('PATCH', `/v1/projects/${project.id}`, { credentials: keyOf(pro), body: { description: 'second' } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ id: project.id });
      project = { ...project, description: 'second' };
      expect(await findProject(project.id)).toStrictEqual(project);
    });

    it('clears the description with null', async () => {
      const response = await api('PATCH', `/v1/projects/${project.id}`, { credentials: keyOf(pro), body: { description: null } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ id: project.id });
      project = { ...project, description: null };
      expect(await findProject(project.id)).toStrictEqual(project);
    });

    it('changes name and description together', async () => {
      const response = await api('PATCH', `/v1/projects/${project.id}`, {
        credentials: keyOf(pro),
        body: { name: 'Both fields', description: 'third' },
      });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ id: project.id });
      project = { ...project, name: 'Both fields', description: 'third' };
      expect(await findProject(project.id)).toStrictEqual(project);
    });

    it('answers 400 to an empty body and changes nothing', async () => {
      expectError(await api('PATCH', `/v1/projects/${project.id}`, { credentials: keyOf(pro), body: {} }), 400);
      expect(await findProject(project.id)).toStrictEqual(project);
    });

    it('answers 400 to a null name (only the description may be cleared)', async () => {
      expectError(await api('PATCH', `/v1/projects/${project.id}`, { credentials: keyOf(pro), body: { name: null } }), 400);
      expect(await findProject(project.id)).toStrictEqual(project);
    });

    it('answers 404 for an unknown project id and for a non-UUID id', async () => {
      expectError(await api('PATCH', `/v1/projects/${unknownId()}`, { credentials: keyOf(pro), body: { name: 'x' } }), 404);
      expectError(await api('PATCH', '/v1/projects/not-a-uuid', { credentials: keyOf(pro), body: { name: 'x' } }), 404);
    });
  });

  it('POST /v1/projects without a name answers 400 and creates nothing', async () => {
    const before = await listProjects(keyOf(pro));
    expectError(await api('POST', '/v1/projects', { credentials: keyOf(pro), body: { description: 'no name' } }), 400);
    expect(await listProjects(keyOf(pro))).toStrictEqual(before);
  });

  it('a free workspace may have 3 projects: the 4th answers 403 and is not created', async () => {
    const free = await createWorkspace({ plan: 'free' });
    const ids = [];
    for (let index = 1; index <= 3; index++) ids.push((await createProject(keyOf(free), { name: `Free ${index}` })).id);
    expectError(await api('POST', '/v1/projects', { credentials: keyOf(free), body: { name: 'Free 4' } }), 403);
    expect((await listProjects(keyOf(free))).map((project) => project.id).sort()).toStrictEqual(ids.sort());
  });

  it('a pro workspace has no project limit', async () => {
    const fresh = await createWorkspace({ plan: 'pro' });
    const ids = [];
    for (let index = 1; index <= 5; index++) {
      const response = await api<CreatedProject>('POST', '/v1/projects', { credentials: keyOf(fresh), body: { name: `Pro ${index}` } });
      expectStatus(response, 201);
      ids.push(response.body.id);
    }
    expect((await listProjects(keyOf(fresh))).map((project) => project.id).sort()).toStrictEqual(ids.sort());
  });
});

describe('identifiers', () => {
  it('are opaque UUIDs, never sequential numbers', async () => {
    const ws = await createWorkspace();
    const credentials = keyOf(ws);
    const project = await createProject(credentials);
    const section = await createSection(credentials, project.id);
    const task = await createTask(credentials, { projectId: project.id, listId: section.id });
    const comment = await createComment(credentials, task.id);
    const statuses = await getStatuses(credentials);
    const ids = [ws.workspace.id, ws.owner.userId, project.id, project.defaultListId, section.id, task.id, comment.id, ...statuses.all.map((s) => s.id)];
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('sections', () => {
  let ws: TestWorkspace;
  let project: CreatedProject;

  beforeAll(async () => {
    ws = await createWorkspace({ plan: 'free' });
    project = await createProject(keyOf(ws));
  });

  it('POST /v1/sections answers 201 {id} and appends each section at the end', async () => {
    const created: string[] = [];
    for (const name of ['Doing', 'Review', 'Done']) {
      const response = await api<{ id: string }>('POST', '/v1/sections', { credentials: keyOf(ws), body: { projectId: project.id, name } });
      expectStatus(response, 201);
      expect(response.body).toStrictEqual({ id: expect.any(String) });
      created.push(response.body.id);
    }
    const response = await api<Section[]>('GET', `/v1/projects/${project.id}/sections`, { credentials: keyOf(ws) });
    expectStatus(response, 200);
    const sections = response.body;
    expect(sections).toStrictEqual([
      { id: project.defaultListId, name: 'To Do', order: 0, projectId: project.id },
      { id: created[0], name: 'Doing', order: expect.any(Number), projectId: project.id },
      { id: created[1], name: 'Review', order: expect.any(Number), projectId: project.id },
      { id: created[2], name: 'Done', order: expect.any(Number), projectId: project.id },
    ]);
    for (let index = 1; index < sections.length; index++) {
      expect(Number.isInteger(sections[index]!.order)).toBe(true);
      expect(sections[index]!.order).toBeGreaterThan(sections[index - 1]!.order);
    }
  });

  it('lists only the sections of the project asked for', async () => {
    const second = await createProject(keyOf(ws));
    const { id } = await createSection(keyOf(ws), second.id, 'Only here');
    expect(await listSections(keyOf(ws), second.id)).toStrictEqual([
      { id: second.defaultListId, name: 'To Do', order: 0, projectId: second.id },
      { id, name: 'Only here', order: expect.any(Number), projectId: second.id },
    ]);
    expect((await listSections(keyOf(ws), project.id)).map((section) => section.id)).not.toContain(id);
  });

  it('PATCH /v1/sections/:id renames the section and answers 200 with the Section object', async () => {
    const { id } = await createSection(keyOf(ws), project.id, 'Old name');
    const before = (await listSections(keyOf(ws), project.id)).find((section) => section.id === id)!;
    const response = await api<Section>('PATCH', `/v1/sections/${id}`, { credentials: keyOf(ws), body: { name: 'New name' } });
    expectStatus(response, 200);
    expect(response.body).toStrictEqual({ id, name: 'New name', order: before.order, projectId: project.id });
    expect((await listSections(keyOf(ws), project.id)).find((section) => section.id === id)).toStrictEqual(response.body);
  });

  it('PATCH /v1/sections/:id renames the default section too', async () => {
    const response = await api<Section>('PATCH', `/v1/sections/${project.defaultListId}`, { credentials: keyOf(ws), body: { name: 'Backlog' } });
    expectStatus(response, 200);
    expect(response.body).toStrictEqual({ id: project.defaultListId, name: 'Backlog', order: 0, projectId: project.id });
  });

  it('PATCH /v1/sections/:id without a name answers 400 and changes nothing', async () => {
    const { id } = await createSection(keyOf(ws), project.id, 'Keep me');
    const before = await listSections(keyOf(ws), project.id);
    expectError(await api('PATCH', `/v1/sections/${id}`, { credentials: keyOf(ws), body: {} }), 400);
    expect(await listSections(keyOf(ws), project.id)).toStrictEqual(before);
  });

  it('PATCH /v1/sections/:id answers 404 for an unknown or non-UUID id', async () => {
    expectError(await api('PATCH', `/v1/sections/${unknownId()}`, { credentials: keyOf(ws), body: { name: 'x' } }), 404);
    expectError(await api('PATCH', '/v1/sections/123', { credentials: keyOf(ws), body: { name: 'x' } }), 404);
  });

  it('POST /v1/sections without a name or without a projectId answers 400 and creates nothing', async () => {
    const before = await listSections(keyOf(ws), project.id);
    expectError(await api('POST', '/v1/sections', { credentials: keyOf(ws), body: { projectId: project.id } }), 400);
    expectError(await api('POST', '/v1/sections', { credentials: keyOf(ws), body: { name: 'Orphan' } }), 400);
    expect(await listSections(keyOf(ws), project.id)).toStrictEqual(before);
  });

  it('POST /v1/sections for an unknown project answers 404', async () => {
    expectError(await api('POST', '/v1/sections', { credentials: keyOf(ws), body: { projectId: unknownId(), name: 'Lost' } }), 404);
  });

  it('GET /v1/projects/:projectId/sections answers 404 for an unknown or non-UUID project', async () => {
    expectError(await api('GET', `/v1/projects/${unknownId()}/sections`, { credentials: keyOf(ws) }), 404);
    expectError(await api('GET', '/v1/projects/nope/sections', { credentials: keyOf(ws) }), 404);
  });
});
