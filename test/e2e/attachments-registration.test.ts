import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../support/api.js';
import { attach, call, put, register, requestUpload, workspaceWithTask, type ListedAttachment } from '../support/attachments.js';
import { createProject, createTask, expectError, unknownId, type CreatedTask } from '../support/fixtures.js';

/*
 * What the attachment calls (test/support/attachments.ts) refuse and who may use them, against the
 * real stack: malformed upload requests are 400 naming the field; every route but the download needs
 * credentials; another workspace's task or upload is 404; a registration must match the declared and
 * stored type and size, registers once (concurrently too) and only on one task; file names are
 * sanitised and sent back with RFC 6266 filename*; the download url needs its own token; the OpenAPI
 * document lists the routes.
 */

const stack = inject('stack');

describe('attachments: three-step upload, permanent download URL', () => {
  let freeKey: Credentials;
  let otherKey: Credentials;
  let task: CreatedTask;
  let otherTask: CreatedTask;

  beforeAll(async () => {
    [{ key: freeKey, task }, { key: otherKey, task: otherTask }] = await Promise.all([workspaceWithTask('free'), workspaceWithTask()]);
  });

  it.each([
    [{ contentType: 'image/png', size: 0 }, 'body.size'],
    [{ contentType: 'image/png', size: -5 }, 'body.size'],
    [{ contentType: 'image/png', size: 1.5 }, 'body.size'],
    [{ contentType: 'image/png', size: '10' }, 'body.size'],
    [{ contentType: 'image/png' }, 'body.size'],
    [{ size: 10 }, 'body.contentType'],
    [{ contentType: 'not a mime type', size: 10 }, 'contentType'],
    [{ contentType: 'image', size: 10 }, 'contentType'],
    [{ contentType: 'image/png\r\nx-evil: 1', size: 10 }, 'contentType'],
    [{ contentType: 'image/png', size: 10, extra: true }, 'body.extra'],
  ])('rejects the upload request %j with 400', async (body, mentioned) => {
    const response = await call('POST', '/v1/attachments/upload', { credentials: freeKey, body });
    expectError(response, 400);
    expect(response.body).toEqual({ error: expect.stringContaining(mentioned) });
  });

  it('requires credentials for the upload, registration and list routes', async () => {
    expectError(await call('POST', '/v1/attachments/upload', { body: { contentType: 'image/png', size: 1 } }), 401);
    expectError(await call('POST', `/v1/tasks/${task.id}/attachments`, { body: {} }), 401);
    expectError(await call('GET', `/v1/tasks/${task.id}/attachments`), 401);
  });

  it('answers 404 for a task or an upload of another workspace, and for unknown ids', async () => {
    const bytes = Buffer.from('cross-workspace');
    const mine = await requestUpload(freeKey, 'text/plain', bytes.length);
    expect((await put(mine.uploadUrl, bytes, 'text/plain')).status).toBe(200);
    const body = { attachmentId: mine.attachmentId, name: 'a.txt', contentType: 'text/plain', size: bytes.length };

    // Own upload on another workspace's task.
    expectError(await register(freeKey, otherTask.id, body), 404);
    // Another workspace's upload on its own task.
    expectError(await register(otherKey, otherTask.id, body), 404);
    // Listing another workspace's task.
    expectError(await call('GET', `/v1/tasks/${otherTask.id}/attachments`, { credentials: freeKey }), 404);
    // Unknown task, unknown upload, malformed task id.
    expectError(await register(freeKey, unknownId(), body), 404);
    expectError(await register(freeKey, task.id, { ...body, attachmentId: unknownId() }), 404);
    expectError(await register(freeKey, 'not-a-uuid', body), 404);
    // A malformed attachmentId in the body is a 400, like every body id.
    expectError(await register(freeKey, task.id, { ...body, attachmentId: 'not-a-uuid' }), 400);
    expectError(await call('GET', `/v1/tasks/${unknownId()}/attachments`, { credentials: freeKey }), 404);

    // Nothing was attached anywhere; the owner can still register it.
    const list = await call<ListedAttachment[]>('GET', `/v1/tasks/${otherTask.id}/attachments`, { credentials: otherKey });
    expect(list.body).toEqual([]);
    expect((await register(freeKey, task.id, body)).status).toBe(201);
  });

  it('refuses a registration whose type or size differ from the declared and stored ones', async () => {
    const bytes = Buffer.from('{"hello":"world"}');
    const upload = await requestUpload(freeKey, 'application/json', bytes.length);
    expect((await put(upload.uploadUrl, bytes, 'application/json')).status).toBe(200);
    const body = { attachmentId: upload.attachmentId, name: 'data.json', contentType: 'application/json', size: bytes.length };
    expectError(await register(freeKey, task.id, { ...body, size: bytes.length + 1 }), 400);
    expectError(await register(freeKey, task.id, { ...body, contentType: 'text/plain' }), 400);
    expect((await register(freeKey, task.id, body)).status).toBe(201);
  });

  it('registers one upload once: repeated and concurrent registrations return the same {id, url}', async () => {
    const bytes = randomBytes(1000);
    const upload = await requestUpload(freeKey, 'image/jpeg', bytes.length);
    expect((await put(upload.uploadUrl, bytes, 'image/jpeg')).status).toBe(200);
    const body = { attachmentId: upload.attachmentId, name: 'photo.jpg', contentType: 'image/jpeg', size: bytes.length };

    const concurrent = await Promise.all(Array.from({ length: 6 }, () => register(freeKey, task.id, body)));
    const again = await register(freeKey, task.id, body);
    for (const response of [...concurrent, again]) {
      expect(response.status, response.text).toBe(201);
      expect(response.body).toEqual(concurrent[0]?.body);
    }
    const list = await call<ListedAttachment[]>('GET', `/v1/tasks/${task.id}/attachments`, { credentials: freeKey });
    expect(list.body.filter((attachment) => attachment.id === upload.attachmentId)).toHaveLength(1);

    // The same upload on another task of the workspace is a conflict.
    const project = await createProject(freeKey);
    const second = await createTask(freeKey, { projectId: project.id, listId: project.defaultListId });
    expectError(await register(freeKey, second.id, body), 409);
  });

  it('sanitises the file name, keeps unicode, and names the download with RFC 6266 filename*', async () => {
    const bytes = Buffer.from('unicode name');
    const attached = await attach(freeKey, task.id, {
      name: '  ../secret\\dir/Résumé\u0007 \u202Eнота 😀.txt ',
      contentType: 'text/plain; charset=utf-8',
      bytes,
    });
    const list = await call<ListedAttachment[]>('GET', `/v1/tasks/${task.id}/attachments`, { credentials: freeKey });
    const listed = list.body.find((attachment) => attachment.id === attached.id);
    expect(listed?.name).toBe('.._secret_dir_Résumé нота 😀.txt');
    expect(listed?.contentType).toBe('text/plain; charset=utf-8');

    const download = await fetch(attached.url);
    expect(download.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const disposition = download.headers.get('content-disposition') ?? '';
    const encoded = /filename\*=UTF-8''(\S+)$/.exec(disposition)?.[1] ?? '';
    expect(decodeURIComponent(encoded)).toBe('.._secret_dir_Résumé нота 😀.txt');
    expect(disposition).toMatch(/^attachment; filename="[\x20-\x7e]+"; /);
    expect(await download.text()).toBe('unicode name');

    for (const name of ['', ' / ', '\u0000', '..', 'a'.repeat(256)]) {
      const upload = await requestUpload(freeKey, 'text/plain', 1);
      const response = await register(freeKey, task.id, { attachmentId: upload.attachmentId, name, contentType: 'text/plain', size: 1 });
      expectError(response, 400);
    }
  });

  it('answers 404 for a download url with a wrong, missing or foreign token', async () => {
    const attached = await attach(freeKey, task.id, { name: 'secret.txt', contentType: 'text/plain', bytes: Buffer.from('s3cr3t') });
    const url = new URL(attached.url);
    const wrong = new URL(url);
    wrong.searchParams.set('token', 'A'.repeat(43));
    const missing = new URL(url);
    missing.search = '';
    for (const candidate of [wrong, missing]) {
      const response = await fetch(candidate, { redirect: 'manual' });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: 'attachment not found' });
    }
    // The token of one attachment does not open another.
    const another = await attach(freeKey, task.id, { name: 'other.txt', contentType: 'text/plain', bytes: Buffer.from('other') });
    const swapped = new URL(another.url);
    swapped.searchParams.set('token', url.searchParams.get('token') ?? '');
    expect((await fetch(swapped, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(`${stack.gatewayUrl}/v1/attachments/not-a-uuid/content?token=x`, { redirect: 'manual' })).status).toBe(404);
  });

  it('documents the attachment routes in the OpenAPI document', async () => {
    const document = (await (await fetch(`${stack.gatewayUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>>;
    };
    expect(Object.keys(document.paths['/v1/attachments/upload'] ?? {})).toContain('post');
    expect(Object.keys(document.paths['/v1/tasks/{id}/attachments'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/v1/tasks/{id}/attachments']?.get?.responses ?? {})).toContain('200');
    expect(Object.keys(document.paths['/v1/tasks/{id}/attachments']?.post?.responses ?? {})).toContain('201');
    const content = document.paths['/v1/attachments/{id}/content']?.get;
    expect(Object.keys(content?.responses ?? {})).toContain('302');
    expect(content?.security).toEqual([]);
  });
});
