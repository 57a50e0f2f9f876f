import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { loadAttachmentsProto, loadTasksProto, loadWebhooksProto } from '@tws/proto-types';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import { createProject, createSection, createTask, expectError, getTask, keyOf, listProjects, listSections, type CreatedProject, type CreatedTask } from '../support/fixtures.js';

/*
 * Issue 14, finding 6: U+0000 in a name or in rich-text text reached Postgres (which cannot store it
 * in text or jsonb) and answered 500. Every string a client sends is refused with a 400 naming the
 * field: at the gateway, and at each service's own gRPC edge.
 */

const nulError = (field: string): { error: string } => ({ error: `${field}: must not contain the NUL character (U+0000)` });

describe('U+0000 in any client string (issue 14)', () => {
  let ws: TestWorkspace;
  let key: Credentials;
  let project: CreatedProject;
  let section: { id: string };
  let task: CreatedTask;
  let db: pg.Client;
  let projectsBefore: unknown;
  let sectionsBefore: unknown;

  beforeAll(async () => {
    ws = await createWorkspace({ plan: 'pro' });
    key = keyOf(ws);
    project = await createProject(key, { name: 'Kept', description: 'Kept description' });
    section = await createSection(key, project.id, 'Kept section');
    task = await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'Kept task' });
    projectsBefore = await listProjects(key);
    sectionsBefore = await listSections(key, project.id);
    db = new pg.Client({ connectionString: inject('stack').databaseUrl });
    await db.connect();
  });
  afterAll(async () => db.end());

  const webhook = { url: 'https://hooks.example.com/in', secret: 'a-long-enough-secret-0123456789' };
  const cases: Array<[string, string, () => string, () => unknown]> = [
    ['project name', 'POST', () => '/v1/projects', () => ({ name: 'P\0' })],
    ['project description', 'POST', () => '/v1/projects', () => ({ name: 'P', description: 'd\0' })],
    ['project name (PATCH)', 'PATCH', () => `/v1/projects/${project.id}`, () => ({ name: '\0' })],
    ['project description (PATCH)', 'PATCH', () => `/v1/projects/${project.id}`, () => ({ description: 'x\0y' })],
    ['section name', 'POST', () => '/v1/sections', () => ({ projectId: project.id, name: 'S\0' })],
    ['section name (PATCH)', 'PATCH', () => `/v1/sections/${section.id}`, () => ({ name: 'S\0' })],
    ['task name', 'POST', () => '/v1/tasks', () => ({ projectId: project.id, listId: project.defaultListId, name: 'T\0' })],
    ['task name (PATCH)', 'PATCH', () => `/v1/tasks/${task.id}`, () => ({ name: 'T\0' })],
    ['Markdown description', 'PATCH', () => `/v1/tasks/${task.id}`, () => ({ description: '# Title\n\nbody \0' })],
    ['node text', 'PATCH', () => `/v1/tasks/${task.id}`, () => ({ description: [{ type: 'paragraph', children: [{ text: 'a\0' }] }] })],
    ['node type', 'PATCH', () => `/v1/tasks/${task.id}`, () => ({ description: [{ type: 'p\0', children: [{ text: 'a' }] }] })],
    ['node attribute name', 'PATCH', () => `/v1/tasks/${task.id}`, () => ({ description: [{ type: 'p', children: [{ text: 'a', 'x\0': true }] }] })],
    ['comment text', 'POST', () => `/v1/tasks/${task.id}/comments`, () => ({ text: 'c\0' })],
    ['upload content type', 'POST', () => '/v1/attachments/upload', () => ({ contentType: 'text/plain\0', size: 1 })],
    ['attachment name', 'POST', () => `/v1/tasks/${task.id}/attachments`, () => ({ attachmentId: randomUUID(), name: 'f\0.txt', contentType: 'text/plain', size: 1 })],
    ['webhook url', 'POST', () => '/v1/webhooks', () => ({ ...webhook, url: 'https://hooks.example.com/\0' })],
    ['webhook secret', 'POST', () => '/v1/webhooks', () => ({ ...webhook, secret: `${webhook.secret}\0` })],
    ['webhook event', 'POST', () => '/v1/webhooks', () => ({ ...webhook, events: ['task.created\0'] })],
  ];
  const fieldOf: Record<string, string> = {
    'project name': 'body.name',
    'project description': 'body.description',
    'project name (PATCH)': 'body.name',
    'project description (PATCH)': 'body.description',
    'section name': 'body.name',
    'section name (PATCH)': 'body.name',
    'task name': 'body.name',
    'task name (PATCH)': 'body.name',
    'Markdown description': 'body.description',
    'node text': 'body.description[0].children[0].text',
    'node type': 'body.description[0].type',
    'node attribute name': 'body.description[0].children[0]',
    'comment text': 'body.text',
    'upload content type': 'body.contentType',
    'attachment name': 'body.name',
    'webhook url': 'body.url',
    'webhook secret': 'body.secret',
    'webhook event': 'body.events[0]',
  };

  for (const [what, method, path, body] of cases) {
    it(`${what}: 400 naming the field`, async () => {
      const response = await api(method, path(), { credentials: key, body: body() });
      expectError(response, 400);
      expect(response.body).toEqual(nulError(fieldOf[what]!));
    });
  }

  it('a query parameter: 400 naming it', async () => {
    const response = await api('GET', `/v1/webhooks/${randomUUID()}/deliveries?cursor=a%00b`, { credentials: key });
    expectError(response, 400);
    expect(response.body).toEqual(nulError('querystring.cursor'));
  });

  it('nothing was written', async () => {
    expect(await listProjects(key)).toEqual(projectsBefore);
    expect(await listSections(key, project.id)).toEqual(sectionsBefore);
    const kept = await getTask(key, task.id);
    expect([kept.name, kept.description]).toEqual(['Kept task', null]);
    expect((await api<unknown[]>('GET', `/v1/projects/${project.id}/tasks`, { credentials: key })).body).toHaveLength(1);
    expect((await api<unknown[]>('GET', `/v1/tasks/${task.id}/attachments`, { credentials: key })).body).toEqual([]);
    expect((await api<unknown[]>('GET', '/v1/webhooks', { credentials: key })).body).toEqual([]);
    const comments = await db.query('SELECT count(*)::int AS n FROM tasks.comments WHERE task_id = $1', [task.id]);
    expect(comments.rows[0]).toEqual({ n: 0 });
  });

  describe('each service refuses it at its own gRPC edge (INVALID_ARGUMENT, not a failed write)', () => {
    const target = (name: string): string => `127.0.0.1:${inject('stack').services.find((service) => service.name === name)!.grpcPort}`;
    type Method = (request: unknown, callback: (error: grpc.ServiceError | null) => void) => unknown;
    const callOf = (client: grpc.Client, method: string, request: unknown): Promise<grpc.ServiceError | null> =>
      new Promise((resolve) => {
        ((client as unknown as Record<string, Method>)[method]!).call(client, request, (error) => resolve(error));
      });
    const expectRefused = (error: grpc.ServiceError | null, field: string): void => {
      expect({ code: error?.code, details: error?.details }).toEqual({ code: grpc.status.INVALID_ARGUMENT, details: `${field}: must not contain the NUL character (U+0000)` });
    };

    it('tasks: names, Markdown, comments; node text inside nodes JSON', async () => {
      const client = new (loadTasksProto().tasks.v1.TasksService)(target('tasks'), grpc.credentials.createInsecure());
      const workspaceId = ws.workspace.id;
      expectRefused(await callOf(client, 'CreateProject', { workspaceId, name: 'P\0' }), 'name');
      expectRefused(await callOf(client, 'CreateSection', { workspaceId, projectId: project.id, name: 'S\0' }), 'name');
      expectRefused(await callOf(client, 'UpdateTask', { workspaceId, id: task.id, description: { markdown: 'a\0' } }), 'description.markdown');
      expectRefused(await callOf(client, 'CreateComment', { workspaceId, taskId: task.id, text: 'c\0' }), 'text');
      const nodes = await callOf(client, 'UpdateTask', { workspaceId, id: task.id, description: { nodesJson: '[{"type":"p","children":[{"text":"a\\u0000"}]}]' } });
      expect({ code: nodes?.code, details: nodes?.details }).toEqual({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'invalid description: description[0].children[0].text: must not contain the NUL character (U+0000)',
      });
      client.close();
    });

    it('attachments and webhooks', async () => {
      const attachments = new (loadAttachmentsProto().attachments.v1.AttachmentsService)(target('attachments'), grpc.credentials.createInsecure());
      const request = { workspaceId: ws.workspace.id, taskId: task.id, attachmentId: randomUUID(), name: 'f\0', contentType: 'text/plain', sizeBytes: 1 };
      expectRefused(await callOf(attachments, 'RegisterAttachment', request), 'name');
      attachments.close();
      const webhooks = new (loadWebhooksProto().webhooks.v1.WebhooksService)(target('webhooks'), grpc.credentials.createInsecure());
      expectRefused(await callOf(webhooks, 'CreateEndpoint', { workspaceId: ws.workspace.id, ...webhook, secret: 's\0' }), 'secret');
      expectRefused(await callOf(webhooks, 'CreateEndpoint', { workspaceId: ws.workspace.id, ...webhook, events: ['a', 'b\0'] }), 'events[1]');
      webhooks.close();
    });
  });
});
