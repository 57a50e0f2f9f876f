import { createHash, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace, type TestWorkspace } from '../support/admin.js';
import type { ApiResponse, Credentials } from '../support/api.js';
import { requestFrom } from '../support/http-from.js';
import { createProject, createTask, expectError, getTask, keyOf, pollUntil, TIMESTAMP, unknownId, type CreatedTask } from '../support/fixtures.js';
import { stackS3Client } from '../support/s3.js';

/*
 * The three-step upload through the gateway, against the real stack (MinIO, Postgres, services):
 * 1. POST /v1/attachments/upload → presigned PUT bound to Content-Type and Content-Length;
 * 2. PUT the bytes to MinIO with exactly those headers;
 * 3. POST /v1/tasks/:id/attachments → {id, url}; `url` is a permanent capability URL that
 *    redirects to a short-lived presigned GET.
 */

const stack = inject('stack');
const MiB = 2 ** 20;
const bucket = 'task-attachments';


async function call<T = unknown>(
  method: string,
  path: string,
  options: { credentials?: Credentials; body?: unknown } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {};
  const credentials = options.credentials ?? {};
  if ('apiKey' in credentials) headers['x-api-key'] = credentials.apiKey;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${stack.gatewayUrl}${path}`, {
    method,
    headers,
    redirect: 'manual',
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  const json = text.length > 0 && (response.headers.get('content-type') ?? '').includes('json');
  return { status: response.status, headers: response.headers, body: (json ? JSON.parse(text) : undefined) as T, text };
}

interface Upload {
  uploadUrl: string;
  attachmentId: string;
}
interface Registered {
  id: string;
  url: string;
}
interface ListedAttachment {
  id: string;
  name: string;
  contentType: string;
  size: number;
  url: string;
  createdAt: string;
}

async function requestUpload(credentials: Credentials, contentType: string, size: number): Promise<Upload> {
  const response = await call<Upload>('POST', '/v1/attachments/upload', { credentials, body: { contentType, size } });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/** PUTs bytes to a presigned URL with the given headers (fetch sets Content-Length from the body). */
async function put(url: string, body: Buffer, contentType?: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: 'PUT',
    headers: contentType === undefined ? {} : { 'content-type': contentType },
    body: new Uint8Array(body),
  });
  return { status: response.status, text: await response.text() };
}

function register(credentials: Credentials, taskId: string, body: Record<string, unknown>): Promise<ApiResponse<Registered>> {
  return call<Registered>('POST', `/v1/tasks/${taskId}/attachments`, { credentials, body });
}

/** Steps 1–3 for one file. */
async function attach(credentials: Credentials, taskId: string, file: { name: string; contentType: string; bytes: Buffer }): Promise<Registered & Upload> {
  const upload = await requestUpload(credentials, file.contentType, file.bytes.length);
  const stored = await put(upload.uploadUrl, file.bytes, file.contentType);
  expect(stored.status, stored.text).toBe(200);
  const registered = await register(credentials, taskId, {
    attachmentId: upload.attachmentId,
    name: file.name,
    contentType: file.contentType,
    size: file.bytes.length,
  });
  expect(registered.status, registered.text).toBe(201);
  return { ...upload, ...registered.body };
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');


/** Keys of the objects stored for a workspace. */
async function objectKeys(workspaceId: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of stackS3Client().listObjectsV2(bucket, `workspaces/${workspaceId}/`, true)) {
    const name = (item as { name?: string }).name;
    if (name) keys.push(name);
  }
  return keys.sort();
}

describe('attachments: three-step upload, permanent download URL', () => {
  let free: TestWorkspace;
  let pro: TestWorkspace;
  let other: TestWorkspace;
  let freeKey: Credentials;
  let proKey: Credentials;
  let otherKey: Credentials;
  let task: CreatedTask;
  let proTask: CreatedTask;
  let otherTask: CreatedTask;

  beforeAll(async () => {
    [free, pro, other] = await Promise.all([createWorkspace({ plan: 'free' }), createWorkspace({ plan: 'pro' }), createWorkspace()]);
    [freeKey, proKey, otherKey] = [keyOf(free), keyOf(pro), keyOf(other)];
    const newTask = async (credentials: Credentials): Promise<CreatedTask> => {
      const project = await createProject(credentials);
      return createTask(credentials, { projectId: project.id, listId: project.defaultListId });
    };
    [task, proTask, otherTask] = await Promise.all([newTask(freeKey), newTask(proKey), newTask(otherKey)]);
  });


  it('uploads real bytes, registers them, and downloads them back through the permanent url', async () => {
    const bytes = randomBytes(150_000);
    const upload = await requestUpload(freeKey, 'application/pdf', bytes.length);
    expect(upload.attachmentId).toMatch(/^[0-9a-f-]{36}$/);

    // The upload URL is a presigned PUT on the public storage endpoint, valid 7 days, signing both headers.
    const uploadUrl = new URL(upload.uploadUrl);
    expect(uploadUrl.origin).toBe(new URL(stack.s3.endpoint).origin);
    expect(uploadUrl.searchParams.get('X-Amz-Expires')).toBe('604800');
    expect(uploadUrl.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual(
      expect.arrayContaining(['content-length', 'content-type', 'host']),
    );

    expect((await put(upload.uploadUrl, bytes, 'application/pdf')).status).toBe(200);
    const registered = await register(freeKey, task.id, {
      attachmentId: upload.attachmentId,
      name: 'Quarterly report.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
    });
    expect(registered.status, registered.text).toBe(201);
    expect(Object.keys(registered.body).sort()).toEqual(['id', 'url']);
    expect(registered.body.id).toBe(upload.attachmentId);

    // The permanent URL is a gateway URL that needs no credentials and redirects to a short-lived GET.
    const permanent = new URL(registered.body.url);
    expect(permanent.origin).toBe(new URL(stack.gatewayUrl).origin);
    expect(permanent.pathname).toBe(`/v1/attachments/${registered.body.id}/content`);
    expect(permanent.searchParams.get('token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const redirect = await fetch(registered.body.url, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('cache-control')).toBe('no-store');
    const location = new URL(redirect.headers.get('location') ?? '');
    expect(location.origin).toBe(new URL(stack.s3.endpoint).origin);
    expect(Number(location.searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(3600);

    const download = await fetch(registered.body.url);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(download.headers.get('content-disposition')).toBe(
      `attachment; filename="Quarterly report.pdf"; filename*=UTF-8''Quarterly%20report.pdf`,
    );
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(bytes));

    // Listed on the task with the same url.
    const list = await call<ListedAttachment[]>('GET', `/v1/tasks/${task.id}/attachments`, { credentials: freeKey });
    expect(list.status).toBe(200);
    expect(list.body).toContainEqual({
      id: registered.body.id,
      name: 'Quarterly report.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      url: registered.body.url,
      createdAt: expect.stringMatching(TIMESTAMP),
    });
  });

  it('keeps the registered bytes: a PUT of other bytes (same size and type) to the upload URL changes nothing', async () => {
    const original = randomBytes(4096);
    const attached = await attach(freeKey, task.id, { name: 'contract.pdf', contentType: 'application/pdf', bytes: original });
    const uploadKey = `workspaces/${free.workspace.id}/${attached.id}`;
    // Registration copied the bytes to a key of their own and removed the upload object.
    expect(await objectKeys(free.workspace.id)).toContain(`workspaces/${free.workspace.id}/attachments/${attached.id}`);
    expect(await objectKeys(free.workspace.id)).not.toContain(uploadKey);

    // The 7-day upload URL still accepts a PUT of the same size and type…
    const forged = randomBytes(4096);
    expect((await put(attached.uploadUrl, forged, 'application/pdf')).status).toBe(200);
    // …and registering again returns the same attachment without copying the new bytes.
    const again = await register(freeKey, task.id, { attachmentId: attached.id, name: 'contract.pdf', contentType: 'application/pdf', size: 4096 });
    expect(again.status, again.text).toBe(201);
    expect(again.body.url).toBe(attached.url);

    const download = await fetch(attached.url);
    expect(download.status).toBe(200);
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(original));
  });

  it('keeps the single-task response in its contract shape', async () => {
    const single = await getTask(freeKey, task.id);
    expect(Object.keys(single).sort()).toEqual(
      ['assigneeId', 'createdAt', 'description', 'id', 'isCompleted', 'labels', 'listId', 'name', 'number', 'projectId', 'statusId'].sort(),
    );
  });

  it('builds permanent urls from the configured PUBLIC_BASE_URL, never from a forged Host or X-Forwarded-* header', async () => {
    const forged = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', 'x-api-key': pro.apiKey.key };
    const bytes = randomBytes(16);
    const upload = await requestUpload(proKey, 'application/octet-stream', bytes.length);
    expect((await put(upload.uploadUrl, bytes, 'application/octet-stream')).status).toBe(200);
    const registered = await requestFrom('127.0.0.1', 'POST', `/v1/tasks/${proTask.id}/attachments`, {
      headers: forged,
      body: { attachmentId: upload.attachmentId, name: 'host.bin', contentType: 'application/octet-stream', size: bytes.length },
    });
    expect(registered.status, registered.text).toBe(201);
    const listed = await requestFrom('127.0.0.1', 'GET', `/v1/tasks/${proTask.id}/attachments`, { headers: forged });
    expect(listed.status, listed.text).toBe(200);
    const urls = [(registered.body as Registered).url, ...(listed.body as ListedAttachment[]).map((attachment) => attachment.url)];
    for (const url of urls) {
      expect(url).not.toContain('evil.example');
      // The local stack sets PUBLIC_BASE_URL to the gateway's own address.
      expect(url.startsWith(`${stack.gatewayUrl}/v1/attachments/`), url).toBe(true);
    }
  });

  it('MinIO itself refuses a PUT with another Content-Length or Content-Type, and nothing is stored', async () => {
    const bytes = randomBytes(4096);
    const upload = await requestUpload(freeKey, 'image/png', bytes.length);

    const shorter = await put(upload.uploadUrl, bytes.subarray(0, 4095), 'image/png');
    expect(shorter.status).toBe(403);
    expect(shorter.text).toContain('SignatureDoesNotMatch');
    const longer = await put(upload.uploadUrl, Buffer.concat([bytes, Buffer.from('x')]), 'image/png');
    expect(longer.status).toBe(403);
    const otherType = await put(upload.uploadUrl, bytes, 'text/html');
    expect(otherType.status).toBe(403);
    expect(otherType.text).toContain('SignatureDoesNotMatch');
    const noType = await put(upload.uploadUrl, bytes);
    expect(noType.status).toBeGreaterThanOrEqual(400);

    const body = { attachmentId: upload.attachmentId, name: 'x.png', contentType: 'image/png', size: bytes.length };
    const notUploaded = await register(freeKey, task.id, body);
    expectError(notUploaded, 400);
    expect(notUploaded.body).toEqual({ error: expect.stringContaining('not been uploaded') });

    // With the exact headers the same URL works.
    expect((await put(upload.uploadUrl, bytes, 'image/png')).status).toBe(200);
    expect((await register(freeKey, task.id, body)).status).toBe(201);
  });

  it('answers 400 naming the plan limit for a declaration over 25 MB on the free plan', async () => {
    const response = await call('POST', '/v1/attachments/upload', {
      credentials: freeKey,
      body: { contentType: 'application/zip', size: 25 * MiB + 1 },
    });
    expectError(response, 400);
    expect(response.body).toEqual({ error: expect.stringMatching(/free plan.*25 MB \(26214400 bytes\)/) });
    // The limit itself is allowed.
    expect((await requestUpload(freeKey, 'application/zip', 25 * MiB)).attachmentId).toBeTruthy();
  });

  it('lets a pro workspace upload 25 MB + 1 byte for real, and refuses 100 MB + 1', async () => {
    const bytes = randomBytes(25 * MiB + 1);
    const attached = await attach(proKey, proTask.id, { name: 'big.bin', contentType: 'application/octet-stream', bytes });
    const download = await fetch(attached.url);
    expect(download.status).toBe(200);
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(bytes));

    const tooBig = await call('POST', '/v1/attachments/upload', {
      credentials: proKey,
      body: { contentType: 'application/octet-stream', size: 100 * MiB + 1 },
    });
    expectError(tooBig, 400);
    expect(tooBig.body).toEqual({ error: expect.stringMatching(/pro plan.*100 MB \(104857600 bytes\)/) });
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

  it('deleting the task removes its attachment records and objects from MinIO', async () => {
    const project = await createProject(freeKey);
    const doomed = await createTask(freeKey, { projectId: project.id, listId: project.defaultListId });
    const first = await attach(freeKey, doomed.id, { name: 'one.txt', contentType: 'text/plain', bytes: Buffer.from('one') });
    const second = await attach(freeKey, doomed.id, { name: 'two.bin', contentType: 'application/octet-stream', bytes: randomBytes(2048) });
    const keyOfAttachment = (id: string): string => `workspaces/${free.workspace.id}/attachments/${id}`;
    expect(await objectKeys(free.workspace.id)).toEqual(expect.arrayContaining([keyOfAttachment(first.id), keyOfAttachment(second.id)]));
    // A late PUT to an upload URL re-creates an upload object; the deletion removes it as well.
    expect((await put(first.uploadUrl, Buffer.from('uno'), 'text/plain')).status).toBe(200);
    const uploadKey = `workspaces/${free.workspace.id}/${first.id}`;

    const deleted = await call('DELETE', `/v1/tasks/${doomed.id}`, { credentials: freeKey });
    expect(deleted.status, deleted.text).toBe(204);

    const remaining = await pollUntil(
      () => objectKeys(free.workspace.id),
      (keys) => !keys.includes(keyOfAttachment(first.id)) && !keys.includes(keyOfAttachment(second.id)) && !keys.includes(uploadKey),
      { timeoutMs: 10_000 },
    );
    expect(remaining).not.toContain(uploadKey);
    expect(remaining).not.toContain(keyOfAttachment(first.id));
    expect(remaining).not.toContain(keyOfAttachment(second.id));
    // The permanent URLs stop working; attachments of other tasks are untouched.
    expect((await fetch(first.url, { redirect: 'manual' })).status).toBe(404);
    expect((await call('GET', `/v1/tasks/${doomed.id}/attachments`, { credentials: freeKey })).status).toBe(404);
    const kept = await call<ListedAttachment[]>('GET', `/v1/tasks/${task.id}/attachments`, { credentials: freeKey });
    expect(kept.body.length).toBeGreaterThan(0);
    // The deleted uploads can never be registered again.
    const reRegister = await register(freeKey, task.id, { attachmentId: first.id, name: 'one.txt', contentType: 'text/plain', size: 3 });
    expectError(reRegister, 404);
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

  it('counts uploads, registrations and bytes in the attachments service metrics', async () => {
    const opsUrl = stack.services.find((service) => service.name === 'attachments')?.opsUrl;
    const text = await (await fetch(`${opsUrl}/metrics`)).text();
    const value = (name: string): number => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
    expect(value('attachment_uploads_requested_total')).toBeGreaterThan(5);
    expect(value('attachment_registered_total')).toBeGreaterThan(3);
    expect(value('attachment_bytes_registered_total')).toBeGreaterThan(25 * MiB);
    expect(text).toContain('# TYPE attachment_sweeper_removed_total counter');
  });
});
