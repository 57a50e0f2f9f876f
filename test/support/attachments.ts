import { createHash } from 'node:crypto';
import { expect, inject } from 'vitest';
import { createWorkspace, type TestWorkspace } from './admin.js';
import type { ApiResponse, Credentials } from './api.js';
import { createProject, createTask, keyOf, type CreatedTask } from './fixtures.js';
import { stackS3Client } from './s3.js';

/*
 * The three-step attachment upload as the e2e suites (test/e2e/attachments-*.test.ts) drive it:
 * 1. POST /v1/attachments/upload → presigned PUT bound to Content-Type and Content-Length;
 * 2. PUT the bytes to MinIO with exactly those headers;
 * 3. POST /v1/tasks/:id/attachments → {id, url}; `url` is a permanent capability URL that
 *    redirects to a short-lived presigned GET.
 */

export const MiB = 2 ** 20;
const bucket = 'task-attachments';

/** One gateway call that does not follow redirects (the permanent url answers 302). */
export async function call<T = unknown>(
  method: string,
  path: string,
  options: { credentials?: Credentials; body?: unknown } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {};
  const credentials = options.credentials ?? {};
  if ('apiKey' in credentials) headers['x-api-key'] = credentials.apiKey;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${inject('stack').gatewayUrl}${path}`, {
    method,
    headers,
    redirect: 'manual',
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  const json = text.length > 0 && (response.headers.get('content-type') ?? '').includes('json');
  return { status: response.status, headers: response.headers, body: (json ? JSON.parse(text) : undefined) as T, text };
}

export interface Upload {
  uploadUrl: string;
  attachmentId: string;
}
export interface Registered {
  id: string;
  url: string;
}
export interface ListedAttachment {
  id: string;
  name: string;
  contentType: string;
  size: number;
  url: string;
  createdAt: string;
}

export async function requestUpload(credentials: Credentials, contentType: string, size: number): Promise<Upload> {
  const response = await call<Upload>('POST', '/v1/attachments/upload', { credentials, body: { contentType, size } });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/** PUTs bytes to a presigned URL with the given headers (fetch sets Content-Length from the body). */
export async function put(url: string, body: Buffer, contentType?: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: 'PUT',
    headers: contentType === undefined ? {} : { 'content-type': contentType },
    body: new Uint8Array(body),
  });
  return { status: response.status, text: await response.text() };
}

export function register(credentials: Credentials, taskId: string, body: Record<string, unknown>): Promise<ApiResponse<Registered>> {
  return call<Registered>('POST', `/v1/tasks/${taskId}/attachments`, { credentials, body });
}

/** Steps 1–3 for one file. */
export async function attach(credentials: Credentials, taskId: string, file: { name: string; contentType: string; bytes: Buffer }): Promise<Registered & Upload> {
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

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Keys of the objects stored for a workspace. */
export async function objectKeys(workspaceId: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of stackS3Client().listObjectsV2(bucket, `workspaces/${workspaceId}/`, true)) {
    const name = (item as { name?: string }).name;
    if (name) keys.push(name);
  }
  return keys.sort();
}

/** A workspace (of `plan`, the default one without) with its API key and a task in a project of its own. */
export async function workspaceWithTask(plan?: 'free' | 'pro'): Promise<{ ws: TestWorkspace; key: Credentials; task: CreatedTask }> {
  const ws = await createWorkspace(plan ? { plan } : {});
  const key = keyOf(ws);
  const project = await createProject(key);
  return { ws, key, task: await createTask(key, { projectId: project.id, listId: project.defaultListId }) };
}
