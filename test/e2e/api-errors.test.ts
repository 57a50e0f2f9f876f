import net from 'node:net';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import { api, type Credentials } from '../support/api.js';
import {
  createProject,
  createSection,
  createTask,
  expectError,
  expectStatus,
  getTask,
  keyOf,
  listProjects,
  listSections,
  patchTask,
  plainText,
  type CreatedProject,
  type CreatedTask,
} from '../support/fixtures.js';

describe('errors and hostile input', () => {
  let ws: TestWorkspace;
  let key: Credentials;
  let project: CreatedProject;
  let task: CreatedTask;

  beforeAll(async () => {
    ws = await createWorkspace({ plan: 'pro' });
    key = keyOf(ws);
    project = await createProject(key);
    task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
  });

  describe('routing', () => {
    it.each([
      ['GET', '/v1/nope'],
      ['GET', '/v2/workspace'],
      ['POST', '/v1/workspace'],
      ['DELETE', '/v1/projects'],
      ['GET', '/v1/comments'],
    ])('%s %s (no such route) answers 404 {"error"}', async (method, path) => {
      expectError(await api(method, path, { credentials: key, ...(method === 'POST' ? { body: {} } : {}) }), 404);
    });

    it('answers 404 {"error"} for an unknown route even without credentials', async () => {
      expectError(await api('GET', '/v1/does-not-exist'), 404);
    });
  });

  describe('request bodies', () => {
    it('malformed JSON answers 400', async () => {
      const response = await api('POST', '/v1/projects', {
        credentials: key,
        rawBody: '{"name": "unterminated',
        headers: { 'content-type': 'application/json' },
      });
      expectError(response, 400);
    });

    it('an empty JSON body on POST answers 400', async () => {
      expectError(await api('POST', '/v1/projects', { credentials: key, rawBody: '', headers: { 'content-type': 'application/json' } }), 400);
    });

    it.each([
      ['a JSON array', []],
      ['a JSON string', 'name'],
      ['JSON null', null],
    ])('%s instead of an object answers 400', async (_label, body) => {
      expectError(await api('POST', '/v1/projects', { credentials: key, rawBody: JSON.stringify(body), headers: { 'content-type': 'application/json' } }), 400);
    });

    it.each([
      ['text/plain', JSON.stringify({ name: 'Typed wrong' })],
      ['application/x-www-form-urlencoded', 'name=Typed+wrong'],
      ['application/xml', '<project><name>Typed wrong</name></project>'],
    ])('a %s body answers 415 and creates nothing', async (contentType, rawBody) => {
      const before = await listProjects(key);
      expectError(await api('POST', '/v1/projects', { credentials: key, rawBody, headers: { 'content-type': contentType } }), 415);
      expect(await listProjects(key)).toStrictEqual(before);
    });

    it('a body that is not valid UTF-8 answers 400 and creates nothing', async () => {
      const before = await listProjects(key);
      const rawBody = Buffer.concat([Buffer.from('{"name":"bad '), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]);
      const response = await fetch(`${inject('stack').gatewayUrl}/v1/projects`, {
        method: 'POST',
        headers: { 'x-api-key': (key as { apiKey: string }).apiKey, 'content-type': 'application/json' },
        body: rawBody,
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toStrictEqual({ error: 'request body is not valid UTF-8' });
      expect(await listProjects(key)).toStrictEqual(before);
    });

    it('a string over its documented length answers 400 and creates nothing', async () => {
      const before = await listProjects(key);
      expectError(await api('POST', '/v1/projects', { credentials: key, body: { name: 'n'.repeat(100_000) } }), 400);
      expect(await listProjects(key)).toStrictEqual(before);
    });

    it('deeply nested JSON answers 400, not 500', async () => {
      const rawBody = `{"name":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
      expectError(await api('POST', '/v1/projects', { credentials: key, rawBody, headers: { 'content-type': 'application/json' } }), 400);
    });

    it('a body over 1 MiB answers 413', async () => {
      const rawBody = JSON.stringify({ name: 'Huge', description: 'x'.repeat(1024 * 1024) });
      expect(Buffer.byteLength(rawBody)).toBeGreaterThan(1024 * 1024);
      const before = await listProjects(key);
      expectError(await api('POST', '/v1/projects', { credentials: key, rawBody, headers: { 'content-type': 'application/json' } }), 413);
      expect(await listProjects(key)).toStrictEqual(before);
    });

    it.each([
      ['POST /v1/projects name: 123', 'POST', () => '/v1/projects', () => ({ name: 123 })],
      ['POST /v1/projects description: false', 'POST', () => '/v1/projects', () => ({ name: 'x', description: false })],
      ['POST /v1/projects with an unknown field', 'POST', () => '/v1/projects', () => ({ name: 'x', colour: 'red' })],
      ['PATCH /v1/projects/:id name: []', 'PATCH', () => `/v1/projects/${project.id}`, () => ({ name: [] })],
      ['PATCH /v1/projects/:id description: 5', 'PATCH', () => `/v1/projects/${project.id}`, () => ({ description: 5 })],
      ['POST /v1/sections projectId: 5', 'POST', () => '/v1/sections', () => ({ projectId: 5, name: 'x' })],
      ['POST /v1/sections name: {}', 'POST', () => '/v1/sections', () => ({ projectId: project.id, name: {} })],
      ['PATCH /v1/sections/:id name: true', 'PATCH', () => `/v1/sections/${project.defaultListId}`, () => ({ name: true })],
      ['POST /v1/tasks name: 123', 'POST', () => '/v1/tasks', () => ({ projectId: project.id, listId: project.defaultListId, name: 123 })],
      ['POST /v1/tasks assigneeId: 1', 'POST', () => '/v1/tasks', () => ({ projectId: project.id, listId: project.defaultListId, name: 'x', assigneeId: 1 })],
      ['POST /v1/tasks with an unknown field', 'POST', () => '/v1/tasks', () => ({ projectId: project.id, listId: project.defaultListId, name: 'x', priority: 1 })],
      ['PATCH /v1/tasks/:id isCompleted: "true"', 'PATCH', () => `/v1/tasks/${task.id}`, () => ({ isCompleted: 'true' })],
      ['PATCH /v1/tasks/:id listId: 9', 'PATCH', () => `/v1/tasks/${task.id}`, () => ({ listId: 9 })],
      ['POST /v1/tasks/:id/comments text: 1', 'POST', () => `/v1/tasks/${task.id}/comments`, () => ({ text: 1 })],
    ])('wrong types: %s answers 400 and changes nothing', async (_label, method, path, body) => {
      const before = { projects: await listProjects(key), sections: await listSections(key, project.id), task: await getTask(key, task.id) };
      expectError(await api(method, path(), { credentials: key, body: body() }), 400);
      expect({ projects: await listProjects(key), sections: await listSections(key, project.id), task: await getTask(key, task.id) }).toStrictEqual(before);
    });
  });

  describe('hostile strings are data', () => {
    const sql = "Robert'); DROP TABLE tasks; -- ' OR '1'='1";
    const html = '<script>alert("x")</script><img src=x onerror=alert(1)>';
    const unicode = 'Ünïcödé ✓ 日本語 🚀 \t tab \\ backslash';

    it('stores and returns project names and descriptions verbatim', async () => {
      for (const [name, description] of [
        [sql, html],
        [html, sql],
        [unicode, `${sql}\n${html}`],
      ] as const) {
        const { id } = await createProject(key, { name, description });
        expect((await listProjects(key)).find((p) => p.id === id)).toStrictEqual({ id, name, description, taskPrefix: expect.any(String) });
      }
    });

    it('stores and returns section and task names verbatim', async () => {
      for (const name of [sql, html, unicode]) {
        const section = await createSection(key, project.id, name);
        expect((await listSections(key, project.id)).find((s) => s.id === section.id)?.name).toBe(name);
        const created = await createTask(key, { projectId: project.id, listId: section.id, name });
        expect((await getTask(key, created.id)).name).toBe(name);
        expect((await patchTask(key, created.id, { name: `${name}!` })).name).toBe(`${name}!`);
      }
    });

    it('keeps SQL- and HTML-looking text of a markdown description as text', async () => {
      for (const text of [sql, html]) {
        const updated = await patchTask(key, task.id, { description: text });
        expect(plainText(updated.description ?? [])).toBe(text);
      }
    });

    it('accepts hostile comment text', async () => {
      for (const text of [sql, html, unicode]) {
        const response = await api('POST', `/v1/tasks/${task.id}/comments`, { credentials: key, body: { text } });
        expectStatus(response, 201);
      }
    });

    it('treats ids that look like SQL or paths as unknown (404)', async () => {
      for (const id of ["1' OR '1'='1", '../../etc/passwd']) {
        expectError(await api('GET', `/v1/tasks/${encodeURIComponent(id)}`, { credentials: key }), 404);
      }
    });
  });
  describe('framework errors (before routing, while reading the request)', () => {
    const secret = 'capability-token-that-must-not-be-echoed';

    /** Sends raw bytes to the gateway and returns the whole answer (the server may close the socket). */
    function rawExchange(request: string): Promise<{ status: number; contentType: string; body: string }> {
      const url = new URL(inject('stack').gatewayUrl);
      return new Promise((resolve, reject) => {
        const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () => socket.write(request));
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          // One response is enough: stop once its declared body has arrived.
          const text = Buffer.concat(chunks).toString('latin1');
          const headerEnd = text.indexOf('\r\n\r\n');
          const length = /\r\ncontent-length: *(\d+)/i.exec(text)?.[1];
          if (headerEnd >= 0 && length !== undefined && Buffer.byteLength(text, 'latin1') >= headerEnd + 4 + Number(length)) socket.destroy();
        });
        socket.on('error', () => socket.destroy());
        socket.on('close', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
          if (!status) return reject(new Error(`no HTTP answer: ${JSON.stringify(text)}`));
          const [head = '', body = ''] = text.split('\r\n\r\n');
          resolve({ status, contentType: /\r\ncontent-type: *([^\r]*)/i.exec(head)?.[1] ?? '', body });
        });
        socket.setTimeout(10_000, () => socket.destroy());
      });
    }

    it.each([
      ['a path parameter over 100 characters', () => `/v1/tasks/${'a'.repeat(101)}`, 414],
      ['a path parameter over 100 characters on the download route', () => `/v1/attachments/${'b'.repeat(150)}/content?token=${secret}`, 414],
      ['a bad percent-encoding in the path', () => `/v1/tasks/%zz${'c'.repeat(10)}`, 400],
      ['a bad percent-encoding on the download route', () => `/v1/attachments/%E0%A4%A/content?token=${secret}`, 400],
    ])('%s answers exactly {"error"} without echoing the URL', async (_label, path, status) => {
      for (const credentials of [key, {}] as Credentials[]) {
        const response = await api('GET', path(), { credentials });
        expectError(response, status);
        expect(Object.keys(response.body as object)).toStrictEqual(['error']);
        expect(response.text).not.toContain(secret);
        expect(response.text).not.toMatch(/aaaa|bbbb|cccc|%zz|%E0/);
      }
    });

    it.each([
      ['headers over the size limit', `GET /v1/workspace?token=${secret} HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(40_000)}\r\n\r\n`, 431],
      ['a malformed request line', `NOT A REQUEST ${secret}\r\n\r\n`, 400],
      ['a bad header', `GET /v1/workspace?token=${secret} HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n`, 400],
    ])('%s answers exactly {"error"} with application/json', async (_label, request, status) => {
      const response = await rawExchange(request);
      expect(response.status).toBe(status);
      expect(response.contentType).toMatch(/^application\/json(;|$)/);
      expect(Object.keys(JSON.parse(response.body) as object)).toStrictEqual(['error']);
      expect(response.body).not.toContain(secret);
    });
  });
});
