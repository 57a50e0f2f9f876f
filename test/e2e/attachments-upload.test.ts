import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { TestWorkspace } from '../support/admin.js';
import type { Credentials } from '../support/api.js';
import {
  attach,
  call,
  MiB,
  objectKeys,
  put,
  register,
  requestUpload,
  sha256,
  workspaceWithTask,
  type ListedAttachment,
  type Registered,
} from '../support/attachments.js';
import { requestFrom } from '../support/http-from.js';
import { createProject, createTask, expectError, getTask, pollUntil, TIMESTAMP, type CreatedTask } from '../support/fixtures.js';

/*
 * The three-step upload through the gateway, against the real stack (MinIO, Postgres, services),
 * as test/support/attachments.ts describes it: real bytes go up and come back through the permanent
 * url (built from PUBLIC_BASE_URL only), the registered bytes cannot be overwritten, MinIO enforces
 * the signed Content-Type and Content-Length, the plans' size limits hold, deleting the task removes
 * its objects, and the attachments service counts it all. What the calls refuse, and to whom, is in
 * attachments-registration.test.ts.
 */

const stack = inject('stack');

describe('attachments: three-step upload, permanent download URL', () => {
  let free: TestWorkspace;
  let pro: TestWorkspace;
  let freeKey: Credentials;
  let proKey: Credentials;
  let task: CreatedTask;
  let proTask: CreatedTask;

  beforeAll(async () => {
    [{ ws: free, key: freeKey, task }, { ws: pro, key: proKey, task: proTask }] = await Promise.all([workspaceWithTask('free'), workspaceWithTask('pro')]);
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
      ['assigneeId', 'createdAt', 'description', 'id', 'isCompleted', 'labels', 'listId', 'name', 'number', 'projectId', 'statusId', 'updatedAt'].sort(),
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
