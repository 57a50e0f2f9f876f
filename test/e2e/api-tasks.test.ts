import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import {
  addMember,
  createApiKey,
  createApiKeys,
  createComment,
  createProject,
  createSection,
  createTask,
  expectError,
  expectStatus,
  getStatuses,
  getTask,
  keyOf,
  listTasks,
  patchTask,
  plainText,
  richTextProblems,
  TIMESTAMP,
  unknownId,
  type CreatedProject,
  type CreatedTask,
  type ListedTask,
  type Member,
  type RichTextNode,
  type Status,
  type Task,
} from '../support/fixtures.js';

const LIST_KEYS = ['assigneeId', 'createdAt', 'description', 'id', 'isCompleted', 'listId', 'name', 'number', 'order', 'statusId'];
/** The list shape of a task read in the single shape. */
const listShape = ({ projectId: _projectId, labels: _labels, ...rest }: Task, order: number): ListedTask => ({ ...rest, order });

describe('tasks', () => {
  let ws: TestWorkspace;
  let key: Credentials;
  let member: Member;
  let todo: Status;
  let done: Status;
  let custom: Status;
  /** The project most tests work in, with a second section. */
  let project: CreatedProject;
  let secondSectionId: string;
  /** Another project of the same workspace. */
  let otherProject: CreatedProject;

  beforeAll(async () => {
    ws = await createWorkspace({ plan: 'pro' });
    key = keyOf(ws);
    member = await addMember(ws.workspace.id, 'member');
    ({ todo, done, custom } = await getStatuses(key));
    project = await createProject(key);
    secondSectionId = (await createSection(key, project.id, 'In progress')).id;
    otherProject = await createProject(key);
  });

  /** A new task in the main project's default section, as GET /v1/tasks/:id shows it. */
  const freshTask = async (listId = project.defaultListId): Promise<Task> =>
    getTask(key, (await createTask(key, { projectId: project.id, listId })).id);

  const listed = async (projectId: string, id: string): Promise<ListedTask | undefined> =>
    (await listTasks(key, projectId)).find((task) => task.id === id);

  describe('POST /v1/tasks', () => {
    it('answers 201 {id, number} and numbers tasks 1, 2, 3 within each project', async () => {
      const first = await createProject(key);
      const second = await createProject(key);
      for (const number of [1, 2, 3]) {
        const response = await api<CreatedTask>('POST', '/v1/tasks', {
          credentials: key,
          body: { projectId: first.id, listId: first.defaultListId, name: `Task ${number}` },
        });
        expectStatus(response, 201);
        expect(response.body).toStrictEqual({ id: expect.any(String), number });
      }
      const response = await api<CreatedTask>('POST', '/v1/tasks', {
        credentials: key,
        body: { projectId: second.id, listId: second.defaultListId, name: 'First of the second project' },
      });
      expectStatus(response, 201);
      expect(response.body).toStrictEqual({ id: expect.any(String), number: 1 });
    });

    it('never hands out a number twice, even after the last task was deleted (task URLs stay unique)', async () => {
      const own = await createProject(key);
      const first = await createTask(key, { projectId: own.id, listId: own.defaultListId });
      const second = await createTask(key, { projectId: own.id, listId: own.defaultListId });
      expectStatus(await api('DELETE', `/v1/tasks/${second.id}`, { credentials: key }), 204);
      const third = await createTask(key, { projectId: own.id, listId: own.defaultListId });
      expect([first.number, second.number, third.number]).toStrictEqual([1, 2, 3]);
    });

    it('creates an open task with the todo status, no description, no assignee and no labels', async () => {
      const before = Date.now();
      const { id, number } = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'Write the brief' });
      const task = await getTask(key, id);
      expect(task).toStrictEqual({
        id,
        number,
        name: 'Write the brief',
        isCompleted: false,
        description: null,
        listId: project.defaultListId,
        assigneeId: null,
        statusId: todo.id,
        projectId: project.id,
        labels: [],
        createdAt: expect.stringMatching(TIMESTAMP),
      });
      const createdAt = Date.parse(task.createdAt);
      expect(createdAt).toBeGreaterThanOrEqual(before - 60_000);
      expect(createdAt).toBeLessThanOrEqual(Date.now() + 60_000);
    });

    it('puts each new task at the end of its section (order = previous max + 1)', async () => {
      const { id: sectionId } = await createSection(key, project.id, 'Appending');
      const ids = [];
      for (let index = 0; index < 3; index++) ids.push((await createTask(key, { projectId: project.id, listId: sectionId })).id);
      const tasks = await listTasks(key, project.id);
      const orders = ids.map((id) => tasks.find((task) => task.id === id)!.order);
      expect(orders.every(Number.isInteger)).toBe(true);
      expect(orders).toStrictEqual([orders[0], orders[0]! + 1, orders[0]! + 2]);
    });

    it('assigns the task to a member given as assigneeId', async () => {
      const { id } = await createTask(key, { projectId: project.id, listId: project.defaultListId, assigneeId: member.userId });
      expect((await getTask(key, id)).assigneeId).toBe(member.userId);
    });

    it('answers 400 when listId is a section of another project, and creates nothing', async () => {
      const before = await listTasks(key, project.id);
      const response = await api('POST', '/v1/tasks', {
        credentials: key,
        body: { projectId: project.id, listId: otherProject.defaultListId, name: 'Misplaced' },
      });
      expectError(response, 400);
      expect(await listTasks(key, project.id)).toStrictEqual(before);
      expect(await listTasks(key, otherProject.id)).toStrictEqual([]);
    });

    it('answers 400 when listId is unknown', async () => {
      const response = await api('POST', '/v1/tasks', { credentials: key, body: { projectId: project.id, listId: unknownId(), name: 'x' } });
      expectError(response, 400);
    });

    it('answers 400 when assigneeId is not a member, and creates nothing', async () => {
      const before = await listTasks(key, project.id);
      const response = await api('POST', '/v1/tasks', {
        credentials: key,
        body: { projectId: project.id, listId: project.defaultListId, name: 'Nobody', assigneeId: unknownId() },
      });
      expectError(response, 400);
      expect(await listTasks(key, project.id)).toStrictEqual(before);
    });

    it('answers 404 when projectId is unknown', async () => {
      const response = await api('POST', '/v1/tasks', { credentials: key, body: { projectId: unknownId(), listId: project.defaultListId, name: 'x' } });
      expectError(response, 404);
    });

    it.each([
      ['name', () => ({ projectId: project.id, listId: project.defaultListId })],
      ['listId', () => ({ projectId: project.id, name: 'No section' })],
      ['projectId', () => ({ listId: project.defaultListId, name: 'No project' })],
    ])('answers 400 without %s, and creates nothing', async (_missing, body) => {
      const before = await listTasks(key, project.id);
      expectError(await api('POST', '/v1/tasks', { credentials: key, body: body() }), 400);
      expect(await listTasks(key, project.id)).toStrictEqual(before);
    });

    it('answers 400 to a description at creation (it is set with PATCH)', async () => {
      const response = await api('POST', '/v1/tasks', {
        credentials: key,
        body: { projectId: project.id, listId: project.defaultListId, name: 'Described', description: 'text' },
      });
      expectError(response, 400);
    });
  });

  describe('reading tasks', () => {
    it('GET /v1/projects/:projectId/tasks lists exactly the project tasks in the list shape', async () => {
      const own = await createProject(key);
      const a = await createTask(key, { projectId: own.id, listId: own.defaultListId, name: 'Alpha', assigneeId: member.userId });
      const b = await createTask(key, { projectId: own.id, listId: own.defaultListId, name: 'Beta' });
      const response = await api<ListedTask[]>('GET', `/v1/projects/${own.id}/tasks`, { credentials: key });
      expectStatus(response, 200);
      for (const task of response.body) expect(Object.keys(task).sort()).toStrictEqual(LIST_KEYS);
      const sorted = [...response.body].sort((x, y) => x.number - y.number);
      expect(sorted).toStrictEqual([
        {
          id: a.id,
          number: 1,
          name: 'Alpha',
          isCompleted: false,
          description: null,
          listId: own.defaultListId,
          assigneeId: member.userId,
          statusId: todo.id,
          order: expect.any(Number),
          createdAt: expect.stringMatching(TIMESTAMP),
        },
        {
          id: b.id,
          number: 2,
          name: 'Beta',
          isCompleted: false,
          description: null,
          listId: own.defaultListId,
          assigneeId: null,
          statusId: todo.id,
          order: sorted[0]!.order + 1,
          createdAt: expect.stringMatching(TIMESTAMP),
        },
      ]);
    });

    it('GET /v1/tasks/:id answers the single shape, consistent with the list', async () => {
      const { id } = await createTask(key, { projectId: project.id, listId: secondSectionId, name: 'Single' });
      const response = await api<Task>('GET', `/v1/tasks/${id}`, { credentials: key });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({
        id,
        number: expect.any(Number),
        name: 'Single',
        isCompleted: false,
        description: null,
        listId: secondSectionId,
        assigneeId: null,
        statusId: todo.id,
        projectId: project.id,
        labels: [],
        createdAt: expect.stringMatching(TIMESTAMP),
      });
      expect(await listed(project.id, id)).toStrictEqual(listShape(response.body, expect.any(Number) as number));
    });

    it('answers 404 for an unknown or non-UUID task id, and for the tasks of an unknown project', async () => {
      expectError(await api('GET', `/v1/tasks/${unknownId()}`, { credentials: key }), 404);
      expectError(await api('GET', '/v1/tasks/not-a-uuid', { credentials: key }), 404);
      expectError(await api('GET', `/v1/projects/${unknownId()}/tasks`, { credentials: key }), 404);
      expectError(await api('GET', '/v1/projects/42/tasks', { credentials: key }), 404);
    });
  });

  describe('PATCH /v1/tasks/:id', () => {
    /** PATCHes and checks the 200 answer and a later GET both equal `expected`. */
    const patchExpecting = async (id: string, body: Record<string, unknown>, expected: Task): Promise<void> => {
      const response = await api<Task>('PATCH', `/v1/tasks/${id}`, { credentials: key, body });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual(expected);
      expect(await getTask(key, id)).toStrictEqual(expected);
    };
    /** PATCHes, expects `status` with the error shape, and checks the task is unchanged. */
    const patchRejected = async (task: Task, body: Record<string, unknown>, status = 400): Promise<void> => {
      expectError(await api('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body }), status);
      expect(await getTask(key, task.id)).toStrictEqual(task);
    };

    it('changes only the name', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { name: 'Renamed' }, { ...task, name: 'Renamed' });
    });

    it('isCompleted true completes the task and sets the done status', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { isCompleted: true }, { ...task, isCompleted: true, statusId: done.id });
    });

    it('isCompleted false reopens the task and sets the todo status', async () => {
      const task = await freshTask();
      await patchTask(key, task.id, { isCompleted: true });
      await patchExpecting(task.id, { isCompleted: false }, { ...task, isCompleted: false, statusId: todo.id });
    });

    it('statusId done completes the task', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { statusId: done.id }, { ...task, statusId: done.id, isCompleted: true });
    });

    it('statusId todo reopens a completed task', async () => {
      const task = await freshTask();
      await patchTask(key, task.id, { isCompleted: true });
      await patchExpecting(task.id, { statusId: todo.id }, { ...task, statusId: todo.id, isCompleted: false });
    });

    it('a custom statusId makes a completed task not completed', async () => {
      const task = await freshTask();
      await patchTask(key, task.id, { statusId: done.id });
      await patchExpecting(task.id, { statusId: custom.id }, { ...task, statusId: custom.id, isCompleted: false });
    });

    it('a custom statusId keeps an open task open', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { statusId: custom.id }, { ...task, statusId: custom.id, isCompleted: false });
    });

    it('accepts isCompleted and statusId together when they agree', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { isCompleted: true, statusId: done.id }, { ...task, isCompleted: true, statusId: done.id });
      await patchExpecting(task.id, { isCompleted: false, statusId: custom.id }, { ...task, isCompleted: false, statusId: custom.id });
      await patchExpecting(task.id, { isCompleted: false, statusId: todo.id }, { ...task, isCompleted: false, statusId: todo.id });
    });

    it.each([
      ['true with the todo status', true, 'todo'],
      ['true with a custom status', true, 'custom'],
      ['false with the done status', false, 'done'],
    ] as const)('answers 400 to isCompleted %s and changes nothing', async (_label, isCompleted, which) => {
      const task = await freshTask();
      const statusId = { todo, done, custom }[which].id;
      await patchRejected(task, { isCompleted, statusId });
    });

    it('answers 400 to an unknown statusId and changes nothing', async () => {
      await patchRejected(await freshTask(), { statusId: unknownId() });
    });

    it('moves the task to another section of the same project, at the end of it', async () => {
      const { id: target } = await createSection(key, project.id, 'Target');
      const occupants = [];
      for (let index = 0; index < 2; index++) occupants.push((await createTask(key, { projectId: project.id, listId: target })).id);
      const task = await freshTask();
      await patchExpecting(task.id, { listId: target }, { ...task, listId: target });
      const tasks = await listTasks(key, project.id);
      const maxBefore = Math.max(...occupants.map((id) => tasks.find((t) => t.id === id)!.order));
      expect(tasks.find((t) => t.id === task.id)).toStrictEqual(listShape({ ...task, listId: target }, maxBefore + 1));
    });

    it('answers 400 to a listId of another project and leaves the task where it was', async () => {
      await patchRejected(await freshTask(), { listId: otherProject.defaultListId });
    });

    it('answers 400 to an unknown listId', async () => {
      await patchRejected(await freshTask(), { listId: unknownId() });
    });

    it('assigns and unassigns with assigneeId', async () => {
      const task = await freshTask();
      await patchExpecting(task.id, { assigneeId: member.userId }, { ...task, assigneeId: member.userId });
      await patchExpecting(task.id, { assigneeId: ws.owner.userId }, { ...task, assigneeId: ws.owner.userId });
      await patchExpecting(task.id, { assigneeId: null }, { ...task, assigneeId: null });
    });

    it('answers 400 to an assigneeId that is not a member', async () => {
      const task = await freshTask();
      await patchTask(key, task.id, { assigneeId: member.userId });
      await patchRejected({ ...task, assigneeId: member.userId }, { assigneeId: unknownId() });
    });

    it('changes several fields in one call', async () => {
      const task = await freshTask();
      await patchExpecting(
        task.id,
        { name: 'All at once', isCompleted: true, assigneeId: member.userId, listId: secondSectionId },
        { ...task, name: 'All at once', isCompleted: true, statusId: done.id, assigneeId: member.userId, listId: secondSectionId },
      );
    });

    it.each([
      ['an empty body', {}],
      ['an unknown field', { priority: 'high' }],
      ['a non-string name', { name: 7 }],
      ['a null name', { name: null }],
      ['a non-boolean isCompleted', { isCompleted: 'yes' }],
      ['a non-string statusId', { statusId: 5 }],
      ['a numeric description', { description: 42 }],
      ['a description object that is not an array', { description: { type: 'paragraph', children: [{ text: 'x' }] } }],
      ['a description array of non-nodes', { description: [1, 'two'] }],
    ])('answers 400 to %s and changes nothing', async (_label, body) => {
      await patchRejected(await freshTask(), body);
    });

    it('answers 404 for an unknown or non-UUID task id', async () => {
      expectError(await api('PATCH', `/v1/tasks/${unknownId()}`, { credentials: key, body: { name: 'x' } }), 404);
      expectError(await api('PATCH', '/v1/tasks/abc', { credentials: key, body: { name: 'x' } }), 404);
    });
  });

  describe('descriptions', () => {
    let task: Task;

    beforeAll(async () => {
      task = await freshTask();
    });

    /** Writes a markdown description and returns the node array the API answers and then serves. */
    const markdown = async (text: string): Promise<RichTextNode[]> => {
      const response = await api<Task>('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body: { description: text } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ ...task, description: expect.any(Array) });
      const nodes = response.body.description!;
      expect(richTextProblems(nodes)).toStrictEqual([]);
      expect((await getTask(key, task.id)).description).toStrictEqual(nodes);
      return nodes;
    };

    const blocks = {
      'heading 1': '# Title',
      'heading 2': '## Title',
      'heading 3': '### Title',
      paragraph: 'Title',
      'bullet list': '- Title',
      'numbered list': '1. Title',
      blockquote: '> Title',
    };
    const inlines = {
      bold: '**Word**',
      italic: '*Word*',
      'bold italic': '***Word***',
      strikethrough: '~~Word~~',
      'inline code': '`Word`',
      plain: 'Word',
    };

    it('turns each block construct into its own distinct rich-text form with the markers removed', async () => {
      const results: Record<string, string> = {};
      for (const [name, source] of Object.entries(blocks)) {
        const nodes = await markdown(source);
        expect({ name, text: plainText(nodes), blocks: nodes.length }).toStrictEqual({ name, text: 'Title', blocks: 1 });
        results[name] = JSON.stringify(nodes);
      }
      // Seven constructs, seven different representations.
      expect(new Set(Object.values(results)).size).toBe(Object.keys(blocks).length);
    });

    it('turns each inline construct into its own distinct rich-text form with the markers removed', async () => {
      const results: Record<string, string> = {};
      for (const [name, source] of Object.entries(inlines)) {
        const nodes = await markdown(source);
        expect({ name, text: plainText(nodes), blocks: nodes.length }).toStrictEqual({ name, text: 'Word', blocks: 1 });
        results[name] = JSON.stringify(nodes);
      }
      // Six constructs (plain text included), six different representations.
      expect(new Set(Object.values(results)).size).toBe(Object.keys(inlines).length);
    });

    it('keeps inline formatting inside a paragraph, as each construct alone produces it', async () => {
      const nodes = await markdown('Plain **bold** and *italic* and ***both*** and ~~struck~~ and `code` here.');
      expect(plainText(nodes)).toBe('Plain bold and italic and both and struck and code here.');
      expect(nodes).toHaveLength(1);
      for (const source of ['**bold**', '*italic*', '***both***', '~~struck~~', '`code`']) {
        const alone = await markdown(source);
        for (const inline of alone[0]!.children!) expect(nodes[0]!.children).toContainEqual(inline);
      }
    });

    it('keeps every item of bullet and numbered lists', async () => {
      expect(plainText(await markdown('- one\n- two\n- three'))).toBe('onetwothree');
      expect(plainText(await markdown('1. first\n2. second'))).toBe('firstsecond');
      expect(await markdown('- one\n- two')).not.toStrictEqual(await markdown('1. one\n2. two'));
    });

    it('separates blocks at blank lines: a document is the blocks it is made of, in order', async () => {
      const parts = [
        '# Heading one',
        '## Heading two',
        '### Heading three',
        '- bullet one\n- bullet two',
        '1. first\n2. second',
        'Plain **bold** and *italic* and ***both*** and ~~struck~~ and `code` here.',
        '> quoted text',
        'Last paragraph',
      ];
      const separately: RichTextNode[] = [];
      for (const part of parts) separately.push(...(await markdown(part)));
      const whole = await markdown(parts.join('\n\n'));
      expect(whole).toStrictEqual(separately);
      expect(plainText(whole)).toBe(
        'Heading one' +
          'Heading two' +
          'Heading three' +
          'bullet one' +
          'bullet two' +
          'first' +
          'second' +
          'Plain bold and italic and both and struck and code here.' +
          'quoted text' +
          'Last paragraph',
      );
      expect(await markdown('First\n\nSecond')).toStrictEqual([...(await markdown('First')), ...(await markdown('Second'))]);
    });

    it('accepts a rich-text node array and returns it as sent, in both task shapes', async () => {
      const nodes = await markdown('## Kept\n\nWith **bold** and `code`');
      await markdown('something else');
      const response = await api<Task>('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body: { description: nodes } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ ...task, description: nodes });
      expect((await listed(project.id, task.id))!.description).toStrictEqual(nodes);
    });

    it('clears the description with null', async () => {
      await markdown('to be cleared');
      const response = await api<Task>('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body: { description: null } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ ...task, description: null });
      expect(await getTask(key, task.id)).toStrictEqual({ ...task, description: null });
      expect((await listed(project.id, task.id))!.description).toBeNull();
    });

    it('stores an empty-string description as null', async () => {
      await markdown('to be emptied');
      const response = await api<Task>('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body: { description: '' } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ ...task, description: null });
      expect(await getTask(key, task.id)).toStrictEqual({ ...task, description: null });
    });

    it.each([21, 5_000, 20_000])('refuses a node array nested %i deep with 400 and keeps the description', async (depth) => {
      // A key of its own: the shared one may be at its rate limit after this file's many calls.
      const own = (await createApiKeys(ws, 1))[0]!;
      expectStatus(await api('PATCH', `/v1/tasks/${task.id}`, { credentials: own, body: { description: 'kept as it was' } }), 200);
      const before = await getTask(own, task.id);
      // Built as text: JSON.stringify itself would overflow the stack on the deepest one.
      const rawBody = `{"description":[${'{"type":"block-quote","children":['.repeat(depth - 1)}{"type":"text","text":"deep","children":[]}${']}'.repeat(depth - 1)}]}`;
      const response = await api('PATCH', `/v1/tasks/${task.id}`, { credentials: own, rawBody, headers: { 'content-type': 'application/json' } });
      expectError(response, 400);
      expect((response.body as { error: string }).error).toMatch(/nested too deeply/);
      expect(await getTask(own, task.id)).toStrictEqual(before);
    });
  });

  describe('DELETE /v1/tasks/:id', () => {
    it('answers 204, then the task and its comments are gone', async () => {
      const keep = await freshTask();
      const task = await freshTask();
      const comments = [await createComment(key, task.id, 'first'), await createComment(key, task.id, 'second')];

      const response = await api('DELETE', `/v1/tasks/${task.id}`, { credentials: key });
      expectStatus(response, 204);
      expect(response.text).toBe('');

      expectError(await api('GET', `/v1/tasks/${task.id}`, { credentials: key }), 404);
      expectError(await api('PATCH', `/v1/tasks/${task.id}`, { credentials: key, body: { name: 'ghost' } }), 404);
      expectError(await api('DELETE', `/v1/tasks/${task.id}`, { credentials: key }), 404);
      expectError(await api('POST', `/v1/tasks/${task.id}/comments`, { credentials: key, body: { text: 'late' } }), 404);
      for (const comment of comments) expectError(await api('DELETE', `/v1/comments/${comment.id}`, { credentials: key }), 404);

      const remaining = await listTasks(key, project.id);
      expect(remaining.map((t) => t.id)).not.toContain(task.id);
      expect(await getTask(key, keep.id)).toStrictEqual(keep);
    });

    it('answers 404 for an unknown or non-UUID task id', async () => {
      expectError(await api('DELETE', `/v1/tasks/${unknownId()}`, { credentials: key }), 404);
      expectError(await api('DELETE', '/v1/tasks/0', { credentials: key }), 404);
    });
  });

  describe('concurrency', () => {
    it('30 parallel creations in one project get numbers exactly 1..30 and distinct positions', async () => {
      // A key of its own, so this burst does not spend the rest of the file's rate budget.
      const burstKey: Credentials = { apiKey: (await createApiKey(ws.workspace.id, ws.owner.userId)).key };
      const target = await createProject(burstKey);
      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          api<CreatedTask>('POST', '/v1/tasks', {
            credentials: burstKey,
            body: { projectId: target.id, listId: target.defaultListId, name: `Parallel ${index}` },
          }),
        ),
      );
      expect(responses.map((response) => response.status)).toStrictEqual(Array.from({ length: 30 }, () => 201));
      const numbers = responses.map((response) => response.body.number).sort((a, b) => a - b);
      expect(numbers).toStrictEqual(Array.from({ length: 30 }, (_, index) => index + 1));

      const tasks = await listTasks(burstKey, target.id);
      expect(tasks.map((task) => task.number).sort((a, b) => a - b)).toStrictEqual(numbers);
      expect(new Set(tasks.map((task) => task.order)).size).toBe(30);
    });

    it('parallel creations and moves into one section each go to its end: positions exactly 0..n-1', async () => {
      const burstKey: Credentials = { apiKey: (await createApiKey(ws.workspace.id, ws.owner.userId)).key };
      const target = await createProject(burstKey);
      const { id: elsewhere } = await createSection(burstKey, target.id);
      const movers: string[] = [];
      for (let index = 0; index < 6; index++) movers.push((await createTask(burstKey, { projectId: target.id, listId: elsewhere })).id);
      await Promise.all([
        ...Array.from({ length: 24 }, () => createTask(burstKey, { projectId: target.id, listId: target.defaultListId })),
        ...movers.map((id) => patchTask(burstKey, id, { listId: target.defaultListId })),
      ]);

      const inSection = (await listTasks(burstKey, target.id)).filter((task) => task.listId === target.defaultListId);
      expect(inSection.map((task) => task.order).sort((a, b) => a - b)).toStrictEqual(Array.from({ length: 30 }, (_, index) => index));
    });

    it('parallel creations with some bad assignees: only those get 400, the others dense numbers and positions', async () => {
      const burstKey: Credentials = { apiKey: (await createApiKey(ws.workspace.id, ws.owner.userId)).key };
      const target = await createProject(burstKey);
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          api<CreatedTask>('POST', '/v1/tasks', {
            credentials: burstKey,
            body: {
              projectId: target.id,
              listId: target.defaultListId,
              name: `Mixed ${index}`,
              ...(index % 4 === 0 ? { assigneeId: unknownId() } : index % 4 === 1 ? { assigneeId: member.userId } : {}),
            },
          }),
        ),
      );
      responses.forEach((response, index) => (index % 4 === 0 ? expectError(response, 400) : expectStatus(response, 201)));
      const tasks = await listTasks(burstKey, target.id);
      expect(tasks.map((task) => task.number).sort((a, b) => a - b)).toStrictEqual(Array.from({ length: 15 }, (_, index) => index + 1));
      expect(tasks.map((task) => task.order).sort((a, b) => a - b)).toStrictEqual(Array.from({ length: 15 }, (_, index) => index));
      expect(tasks.filter((task) => task.assigneeId === member.userId)).toHaveLength(5);
    });

    it('parallel PATCHes of one task all apply, one after another: each answer is its own change', async () => {
      const burstKey: Credentials = { apiKey: (await createApiKey(ws.workspace.id, ws.owner.userId)).key };
      const task = await createTask(burstKey, { projectId: project.id, listId: project.defaultListId });
      const names = Array.from({ length: 16 }, (_, index) => `Contended ${index}`);
      const answers = await Promise.all(
        names.map((name, index) => patchTask(burstKey, task.id, index % 2 === 0 ? { name } : { name, isCompleted: index % 4 === 1 })),
      );
      expect(answers.map((answer) => answer.name)).toStrictEqual(names);
      for (const answer of answers) expect(answer.statusId).toBe(answer.isCompleted ? done.id : todo.id);
      expect(names).toContain((await getTask(burstKey, task.id)).name);
    });
  });
});
