/**
 * ETags on projects and sections through the real stack: their lists and the (added) GET of one send
 * a strong ETag, If-None-Match with it is a 304 with no body; a PATCH with an If-Match that is no
 * longer current is 412 with nothing written; of concurrent PATCHes sending one current If-Match
 * exactly one applies; PATCH answers (tasks too) carry the ETag a GET then gives; another
 * workspace's project or section is a 404, never a 412.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace } from '../support/admin.js';
import { api, type ApiResponse, type Credentials } from '../support/api.js';
import {
  createProject,
  createSection,
  createTask,
  expectError,
  expectStatus,
  keyOf,
  listProjects,
  listSections,
  uniqueName,
  type CreatedProject,
  type Project,
  type Section,
} from '../support/fixtures.js';

describe('ETags of projects and sections', () => {
  let key: Credentials;
  let otherKey: Credentials;
  let project: CreatedProject;

  beforeAll(async () => {
    key = keyOf(await createWorkspace({ plan: 'pro' }));
    otherKey = keyOf(await createWorkspace({ plan: 'pro' }));
    project = await createProject(key);
  });

  const get = (path: string, headers: Record<string, string> = {}, credentials = key): Promise<ApiResponse> =>
    api('GET', path, { credentials, headers });
  const patch = (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}, credentials = key): Promise<ApiResponse> =>
    api('PATCH', path, { credentials, body, headers });
  const tagOf = (response: ApiResponse): string => {
    const tag = response.headers.get('etag');
    expect(tag).toMatch(/^"[\x21\x23-\x7e]+"$/);
    return tag!;
  };
  const expectNotModified = (response: ApiResponse, tag: string): void => {
    expectStatus(response, 304);
    expect(response.text).toBe('');
    expect(response.headers.get('etag')).toBe(tag);
  };
  /** A new section of the project with its path. */
  const freshSection = async (): Promise<string> => `/v1/sections/${(await createSection(key, project.id)).id}`;
  const freshProject = async (): Promise<string> => `/v1/projects/${(await createProject(key)).id}`;

  describe('lists', () => {
    it('GET /v1/projects: a strong ETag, 304 for it (one, in a list, weak, *), stale after a change', async () => {
      const first = await get('/v1/projects');
      expectStatus(first, 200);
      const tag = tagOf(first);
      expect(tagOf(await get('/v1/projects'))).toBe(tag);
      for (const header of [tag, `"old", ${tag}`, `W/${tag}`, '*']) expectNotModified(await get('/v1/projects', { 'if-none-match': header }), tag);
      expectStatus(await patch(`/v1/projects/${project.id}`, { description: uniqueName('Changed') }), 200);
      const after = await get('/v1/projects', { 'if-none-match': tag });
      expectStatus(after, 200);
      expect(tagOf(after)).not.toBe(tag);
      expect(after.body).toEqual(await listProjects(key));
    });

    it('GET /v1/projects/:projectId/sections: 304 for its ETag, stale after a section is added or renamed', async () => {
      const path = `/v1/projects/${project.id}/sections`;
      const tag = tagOf(await get(path));
      expectNotModified(await get(path, { 'if-none-match': tag }), tag);
      const added = await freshSection();
      const afterAdd = await get(path, { 'if-none-match': tag });
      expectStatus(afterAdd, 200);
      const addedTag = tagOf(afterAdd);
      expect(addedTag).not.toBe(tag);
      expectStatus(await patch(added, { name: 'Renamed' }), 200);
      const afterRename = await get(path, { 'if-none-match': addedTag });
      expectStatus(afterRename, 200);
      expect((afterRename.body as Section[]).map((section) => section.name)).toContain('Renamed');
      expectError(await get(path, { 'if-none-match': 'bare' }), 400);
    });
  });

  describe('GET one', () => {
    it('GET /v1/projects/:id and /v1/sections/:id answer the list item with an ETag; 304 for it; a change makes it stale', async () => {
      const projectPath = await freshProject();
      const sectionPath = await freshSection();
      const projectItem = (await listProjects(key)).find((item) => projectPath.endsWith(item.id));
      const sectionItem = (await listSections(key, project.id)).find((item) => sectionPath.endsWith(item.id));
      for (const [path, item, change] of [
        [projectPath, projectItem, { name: 'Renamed project' }],
        [sectionPath, sectionItem, { name: 'Renamed section' }],
      ] as const) {
        const one = await get(path);
        expectStatus(one, 200);
        expect(one.body).toStrictEqual(item);
        const tag = tagOf(one);
        expectNotModified(await get(path, { 'if-none-match': `W/"x", ${tag}` }), tag);
        const patched = await patch(path, change);
        expectStatus(patched, 200);
        const after = await get(path, { 'if-none-match': tag });
        expectStatus(after, 200);
        expect((after.body as Project | Section).name).toBe(change.name);
        expect(tagOf(after)).not.toBe(tag);
        expect(tagOf(patched)).toBe(tagOf(after));
      }
    });

    it("another workspace's project or section is a 404 (GET, and PATCH with its current tag); so is an unknown id", async () => {
      const projectPath = await freshProject();
      const sectionPath = await freshSection();
      for (const path of [projectPath, sectionPath]) {
        const tag = tagOf(await get(path));
        expectError(await get(path, {}, otherKey), 404);
        expectError(await get(path, { 'if-none-match': tag }, otherKey), 404);
        expectError(await patch(path, { name: 'Hijacked' }, { 'if-match': tag }, otherKey), 404);
        expect(tagOf(await get(path))).toBe(tag);
      }
      expectError(await get('/v1/projects/00000000-0000-4000-8000-000000000000'), 404);
      expectError(await get('/v1/sections/00000000-0000-4000-8000-000000000000', { 'if-none-match': '*' }), 404);
      expectError(await get('/v1/sections/not-a-uuid'), 404);
    });
  });

  describe('PATCH with If-Match', () => {
    it('applies with the current tag; a stale, foreign or weak tag is 412 with nothing written', async () => {
      const projectPath = await freshProject();
      const sectionPath = await freshSection();
      for (const path of [projectPath, sectionPath]) {
        const stale = tagOf(await get(path));
        const matched = await patch(path, { name: 'Matched' }, { 'if-match': stale });
        expectStatus(matched, 200);
        const current = await get(path);
        expect((current.body as Section).name).toBe('Matched');
        const otherKind = tagOf(await get(path === projectPath ? sectionPath : projectPath));
        for (const header of [stale, `"nope", ${stale}`, otherKind, `W/${tagOf(current)}`]) {
          expectError(await patch(path, { name: 'Lost update' }, { 'if-match': header }), 412);
        }
        const after = await get(path);
        expect(after.body).toStrictEqual(current.body);
        expect(tagOf(after)).toBe(tagOf(current));
      }
      expectError(await patch(projectPath, { description: 'x' }, { 'if-match': 'abc' }), 400);
    });

    it('* and no If-Match apply as before', async () => {
      const path = await freshSection();
      expectStatus(await patch(path, { name: 'Star' }, { 'if-match': '*' }), 200);
      expectStatus(await patch(path, { name: 'Plain' }), 200);
      expect((await get(path)).body).toMatchObject({ name: 'Plain' });
    });

    it('of concurrent PATCHes sending the same current tag exactly one wins', async () => {
      for (const path of [await freshProject(), await freshSection()]) {
        const tag = tagOf(await get(path));
        const names = Array.from({ length: 8 }, (_, index) => `Writer ${index}`);
        const answers = await Promise.all(names.map((name) => patch(path, { name }, { 'if-match': tag })));
        const won = answers.flatMap((response, index) => (response.status === 200 ? [names[index]] : []));
        expect(won).toHaveLength(1);
        for (const response of answers) if (response.status !== 200) expectError(response, 412);
        expect((await get(path)).body).toMatchObject({ name: won[0] });
      }
    });
  });

  describe('PATCH /v1/tasks/:id answers', () => {
    it('carry the ETag GET /v1/tasks/:id then gives (a plain, a conditional, a no-op and a moving PATCH)', async () => {
      const created = await createTask(key, { projectId: project.id, listId: project.defaultListId });
      const path = `/v1/tasks/${created.id}`;
      const otherList = (await createSection(key, project.id)).id;
      const steps: Array<[Record<string, unknown>, boolean]> = [
        [{ name: 'Plain' }, false],
        [{ name: 'Conditional' }, true],
        [{ name: 'Conditional' }, false],
        [{ listId: otherList }, false],
      ];
      for (const [body, conditional] of steps) {
        const patched = await patch(path, body, conditional ? { 'if-match': tagOf(await get(path)) } : {});
        expectStatus(patched, 200);
        const tag = tagOf(patched);
        expectNotModified(await get(path, { 'if-none-match': tag }), tag);
      }
    });
  });
});
