import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminClient, asPeople, type SignedIn, signIn, startWeb, uniqueEmail, type WebHarness } from '../testing/harness.js';

/**
 * The labels pages and the task label routes with real sessions, the real tasks service
 * (LabelsService) and its Postgres: forms refused with a sentence at the field, hostile names
 * escaped, the 303s to the task's address, 409 at a task's 20th label, guests refused with no data,
 * a non-member's workspace the same 404, CSRF. (The events and the API: test/e2e/labels.test.ts.)
 */
const stack = inject('stack');
const tasks = new (loadTasksProto().tasks.v1.TasksService)(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
let h: WebHarness;
const admin = adminClient(stack);
const emails = { owner: uniqueEmail('labels-owner'), member: uniqueEmail('labels-member'), guest: uniqueEmail('labels-guest') };
let people: Record<keyof typeof emails, SignedIn>;
let urlId: string;
let otherUrlId: string;
let task: { id: string; ref: string };

beforeAll(async () => {
  h = await startWeb(stack);
  const workspace = await admin.createWorkspace(`Labels page ${process.pid}`, emails.owner);
  urlId = workspace.urlId;
  await admin.addMember(workspace.id, emails.member, 'ROLE_MEMBER');
  await admin.addMember(workspace.id, emails.guest, 'ROLE_GUEST');
  otherUrlId = (await admin.createWorkspace(`Labels elsewhere ${process.pid}`, uniqueEmail('labels-other'))).urlId;
  people = { owner: await signIn(h, emails.owner), member: await signIn(h, emails.member), guest: await signIn(h, emails.guest) };
  const project = await callUnary(tasks, tasks.CreateProject, { workspaceId: workspace.id, name: 'Labelled' });
  const made = await callUnary(tasks, tasks.CreateTask, { workspaceId: workspace.id, projectId: project.id, listId: project.defaultListId, name: 'A task' });
  const { projects } = await callUnary(tasks, tasks.ListProjects, { workspaceId: workspace.id });
  task = { id: made.id, ref: `${projects.find((candidate) => candidate.id === project.id)!.taskPrefix}-${made.number}` };
});
afterAll(async () => {
  tasks.close();
  admin.close();
  await h.close();
});

const { get, post } = asPeople(() => h);
const labelsUrl = () => `/${urlId}/settings/labels`;
/** The label ids of the delete forms on a list page, in order. */
const listedIds = (body: string) => [...body.matchAll(/\/labels\/([0-9a-f-]{36})\/delete/g)].map((match) => match[1]!);
const createLabel = async (person: SignedIn, name: string, color = '#1d4ed8') => {
  const response = await post(labelsUrl(), person, { name, color });
  expect(response.statusCode, response.body).toBe(303);
  expect(response.headers.location).toBe(`${labelsUrl()}?notice=created`);
};

describe('labels pages', () => {
  it('the settings index links to the labels; a member creates one (a hostile name shown as text)', async () => {
    const index = await get(`/${urlId}/settings`, people.member);
    expect(index.body).toContain(`<a href="/${urlId}/settings/labels">Labels</a>`);
    const empty = await get(labelsUrl(), people.member);
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('This workspace has no labels yet.');
    expect(empty.body).toContain('<input id="label-color" name="color" type="color" value="#1D4ED8">');

    await createLabel(people.member, '<img src=x onerror=alert(1)>', '#fde047');
    const list = await get(`${labelsUrl()}?notice=created`, people.member);
    expect(list.body).toContain('The label was created.');
    expect(list.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(list.body).not.toContain('<img src=x');
    expect(list.body).toContain('<rect width="1" height="1" fill="#FDE047"/>');
    expect(list.headers['content-security-policy']).toContain("script-src 'none'");
  });

  it.each([
    ['empty', '', '#123456', 'Give the label a name, then save it.', 400],
    ['too long', 'x'.repeat(51), '#123456', 'The name is 51 characters long; shorten it to at most 50.', 400],
    ['not a colour', 'Fine', 'red', 'Pick a colour (a value like #1D4ED8), then save it.', 400],
  ])('a create form that is %s is refused with a sentence at the field', async (_label, name, color, sentence, status) => {
    const response = await post(labelsUrl(), people.member, { name, color });
    expect(response.statusCode).toBe(status);
    expect(response.body).toContain(sentence);
    expect(response.body).toContain('aria-invalid="true" autofocus');
  });

  it('a taken name (ignoring case) is 409 at the field; renaming and recolouring, then deleting, answer with notices', async () => {
    await createLabel(people.owner, 'Urgent');
    const taken = await post(labelsUrl(), people.member, { name: 'urgent', color: '#000000' });
    expect(taken.statusCode).toBe(409);
    expect(taken.body).toContain('A label named “urgent” already exists');
    const urgentId = /id="name-([0-9a-f-]{36})"[^>]*value="Urgent"/.exec(taken.body)![1]!;

    const renamed = await post(`${labelsUrl()}/${urgentId}`, people.member, { name: 'Urgent!', color: '#7f1d1d' });
    expect(renamed.statusCode).toBe(303);
    expect(renamed.headers.location).toBe(`${labelsUrl()}?notice=updated`);
    const after = await get(labelsUrl(), people.member);
    expect(after.body).toContain('<span class="chip chip-light">');
    expect(after.body).toContain('value="Urgent!"');

    const tooLong = await post(`${labelsUrl()}/${urgentId}`, people.member, { name: 'y'.repeat(60), color: '#7f1d1d' });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.body).toContain(`<p class="error" id="error-${urgentId}">`);

    const deleted = await post(`${labelsUrl()}/${urgentId}/delete`, people.owner, {});
    expect(deleted.statusCode).toBe(303);
    expect(deleted.headers.location).toBe(`${labelsUrl()}?notice=deleted`);
    expect(listedIds((await get(labelsUrl(), people.owner)).body)).not.toContain(urgentId);
    expect((await post(`${labelsUrl()}/${urgentId}/delete`, people.owner, {})).statusCode).toBe(404);
  });

  it('the task label routes answer with a 303 to the task’s address; the 21st label on a task is 409 with a sentence', async () => {
    for (let index = 0; index < 21; index++) await createLabel(people.member, `many ${index}`, '#ffffff');
    const ids = [...(await get(labelsUrl(), people.member)).body.matchAll(/id="name-([0-9a-f-]{36})"[^>]*value="many \d+"/g)].map((match) => match[1]!);
    expect(ids).toHaveLength(21);
    for (const id of ids.slice(0, 20)) {
      const added = await post(`/${urlId}/tasks/${task.id}/labels`, people.member, { labelId: id });
      expect(added.statusCode).toBe(303);
      expect(added.headers.location).toBe(`/${urlId}/task/${task.ref}`);
    }
    const full = await post(`/${urlId}/tasks/${task.id}/labels`, people.member, { labelId: ids[20]! });
    expect(full.statusCode).toBe(409);
    expect(full.body).toContain('A task carries at most 20 labels. Take one off the task, then add this one.');
    const removed = await post(`/${urlId}/tasks/${task.id}/labels/${ids[0]}/remove`, people.owner, {});
    expect(removed.statusCode).toBe(303);
    expect(removed.headers.location).toBe(`/${urlId}/task/${task.ref}`);
    expect((await post(`/${urlId}/tasks/${task.id}/labels`, people.member, { labelId: 'not-a-label' })).statusCode).toBe(404);
    expect((await post(`/${urlId}/tasks/00000000-0000-4000-8000-000000000000/labels`, people.member, { labelId: ids[0]! })).statusCode).toBe(404);
  });

  it('a guest gets the refusal (403) and no data, on the page and every post', async () => {
    const [someId] = listedIds((await get(labelsUrl(), people.owner)).body);
    for (const response of [
      await get(labelsUrl(), people.guest),
      await post(labelsUrl(), people.guest, { name: 'Guest label', color: '#000000' }),
      await post(`${labelsUrl()}/${someId}`, people.guest, { name: 'x', color: '#000000' }),
      await post(`${labelsUrl()}/${someId}/delete`, people.guest, {}),
      await post(`/${urlId}/tasks/${task.id}/labels`, people.guest, { labelId: someId! }),
      await post(`/${urlId}/tasks/${task.id}/labels/${someId}/remove`, people.guest, {}),
    ]) {
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('Guests cannot create, change or put labels on tasks.');
      expect(response.body).not.toContain('many 1');
    }
  });

  it('not a member: the same 404 as a workspace that does not exist; CSRF: another origin or no token changes nothing', async () => {
    const notMine = await get(`/${otherUrlId}/settings/labels`, people.owner);
    const nothing = await get('/no-such-workspace/settings/labels', people.owner);
    expect(notMine.statusCode).toBe(404);
    expect(notMine.body).toBe(nothing.body);
    expect((await post(`/${otherUrlId}/tasks/${task.id}/labels`, people.owner, { labelId: 'x' })).statusCode).toBe(404);

    const before = listedIds((await get(labelsUrl(), people.owner)).body);
    expect((await post(labelsUrl(), people.owner, { name: 'evil', color: '#000000' }, 'https://evil.example')).statusCode).toBe(403);
    expect((await post(labelsUrl(), { ...people.owner, csrf: 'forged' }, { name: 'evil', color: '#000000' })).statusCode).toBe(403);
    expect((await post(`${labelsUrl()}/${before[0]}/delete`, { ...people.owner, csrf: 'forged' }, {})).statusCode).toBe(403);
    expect(listedIds((await get(labelsUrl(), people.owner)).body)).toEqual(before);
  });
});
