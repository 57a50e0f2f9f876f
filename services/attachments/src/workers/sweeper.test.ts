import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { Registry } from 'prom-client';
import { createLogger, createPool, type Pool } from '@tws/common';
import { createWorkspace } from '../../../../test/support/admin.js';
import { createProject, createTask, keyOf } from '../../../../test/support/fixtures.js';
import { connectTasks, type TasksPort } from '../clients/tasks.js';
import { loadConfig } from '../config.js';
import * as repo from '../store/repository.js';
import { attachmentKeyOf, objectKeyOf } from '../domain/keys.js';
import { attachmentMetrics, type AttachmentMetrics } from '../metrics.js';
import { createObjectStore, type ObjectStore } from '../store/object-store.js';
import { createSweeper, type SweepReport, type Sweeper } from './sweeper.js';

/*
 * The sweeper against the test stack's Postgres (schema "attachments"), MinIO and tasks service:
 * rows are written with the service's own repository functions, objects through presigned PUTs.
 */

const stack = inject('stack');
const day = 24 * 60 * 60 * 1000;
const graceMs = 60 * 60 * 1000;

let pool: Pool;
let store: ObjectStore;
let tasks: TasksPort;
let metrics: AttachmentMetrics;
let registry: Registry;
let sweeper: Sweeper;

/** An upload row (expiring at `expiresAt`) whose object holds `bytes`. */
async function storedUpload(workspaceId: string, expiresAt: Date, bytes = randomBytes(64)): Promise<repo.Upload> {
  const id = randomUUID();
  const objectKey = objectKeyOf(workspaceId, id);
  await repo.insertUpload(pool, { id, workspaceId, objectKey, contentType: 'application/octet-stream', size: bytes.length, expiresAt });
  const url = await store.presignUpload(objectKey, {
    contentType: 'application/octet-stream',
    size: bytes.length,
    signedAt: new Date(),
    expiresInSeconds: 600,
  });
  const put = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(bytes) });
  expect(put.status, await put.text()).toBe(200);
  const upload = await repo.findUpload(pool, workspaceId, id);
  if (!upload) throw new Error('upload row missing');
  return upload;
}

/**
 * Registers an upload as RegisterAttachment does, copy included; `legacy` records it the way
 * attachments registered before 002_immutable_objects were: serving the upload key.
 */
async function registered(upload: repo.Upload, taskId: string, options: { legacy?: boolean } = {}): Promise<repo.AttachmentRecord> {
  const objectKey = options.legacy ? upload.objectKey : attachmentKeyOf(upload.workspaceId, upload.id);
  if (!options.legacy) expect(await store.copy(upload.objectKey, objectKey)).toBe(true);
  const { record } = await repo.insertAttachmentOnce(pool, {
    objectKey,
    id: upload.id,
    workspaceId: upload.workspaceId,
    taskId,
    name: 'file.bin',
    contentType: upload.contentType,
    size: upload.size,
    downloadToken: randomBytes(32).toString('base64url'),
  });
  return record;
}

/** One sweep; retried while the stack's own attachments service happens to hold the lock. */
async function sweep(): Promise<SweepReport> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const report = await sweeper.runOnce();
    if (report.ran) return report;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the sweeper lock stayed taken');
}

async function removedCount(reason: string): Promise<number> {
  const metric = await registry.getSingleMetric('attachment_sweeper_removed_total')?.get();
  return metric?.values.find((value) => value.labels.reason === reason)?.value ?? 0;
}

describe('attachments sweeper', () => {
  beforeAll(() => {
    const config = loadConfig({
      DATABASE_URL: stack.databaseUrl,
      S3_ENDPOINT: stack.s3.endpoint,
      S3_PUBLIC_ENDPOINT: stack.s3.endpoint,
      S3_ACCESS_KEY: stack.s3.accessKey,
      S3_SECRET_KEY: stack.s3.secretKey,
      TASKS_GRPC_TARGET: stack.tasksGrpcTarget,
    });
    pool = createPool({ url: config.DATABASE_URL, schema: 'attachments', applicationName: 'sweeper-test', max: 4 });
    store = createObjectStore(config);
    tasks = connectTasks({ target: config.TASKS_GRPC_TARGET, deadlineMs: 10_000 });
    registry = new Registry();
    metrics = attachmentMetrics(registry);
    sweeper = createSweeper({
      pool,
      store,
      tasks,
      metrics,
      logger: createLogger('sweeper-test', 'silent'),
      intervalMs: 0,
      batchSize: 10_000,
      uploadGraceMs: graceMs,
    });
  });

  afterAll(async () => {
    await sweeper?.stop();
    tasks?.close();
    store?.close();
    await pool?.end();
  });

  it('removes unregistered uploads once their URL expired (plus grace), keeps the others', async () => {
    const workspaceId = randomUUID();
    const abandoned = await storedUpload(workspaceId, new Date(Date.now() - graceMs - 60_000));
    const inGrace = await storedUpload(workspaceId, new Date(Date.now() - 60_000));
    const valid = await storedUpload(workspaceId, new Date(Date.now() + 7 * day));
    const before = await removedCount('abandoned_upload');

    const report = await sweep();

    expect(report.abandonedUploads).toBeGreaterThanOrEqual(1);
    expect(await removedCount('abandoned_upload')).toBeGreaterThanOrEqual(before + 1);
    expect(await repo.findUpload(pool, workspaceId, abandoned.id)).toBeNull();
    expect(await store.stat(abandoned.objectKey)).toBeNull();
    for (const kept of [inGrace, valid]) {
      expect(await repo.findUpload(pool, workspaceId, kept.id)).not.toBeNull();
      expect(await store.stat(kept.objectKey)).not.toBeNull();
    }
  });

  it('removes the attachments of tasks that no longer exist, and keeps those of existing tasks', async () => {
    const workspace = await createWorkspace();
    const project = await createProject(keyOf(workspace));
    const task = await createTask(keyOf(workspace), { projectId: project.id, listId: project.defaultListId });
    const workspaceId = workspace.workspace.id;
    const future = new Date(Date.now() + 7 * day);
    const live = await registered(await storedUpload(workspaceId, future), task.id);
    const deletedTaskId = randomUUID();
    const orphans = [
      await registered(await storedUpload(workspaceId, future), deletedTaskId),
      await registered(await storedUpload(workspaceId, future), deletedTaskId),
    ];
    const before = await removedCount('task_deleted');

    const report = await sweep();

    expect(report.orphanedAttachments).toBeGreaterThanOrEqual(2);
    expect(await removedCount('task_deleted')).toBeGreaterThanOrEqual(before + 2);
    for (const orphan of orphans) {
      expect(await repo.findAttachment(pool, orphan.id)).toBeNull();
      expect(await store.stat(orphan.objectKey)).toBeNull();
      expect(await store.stat(objectKeyOf(workspaceId, orphan.id))).toBeNull();
      // The upload stays, revoked, until its URL expires: it can never be registered again.
      expect((await repo.findUpload(pool, workspaceId, orphan.id))?.revokedAt).toBeInstanceOf(Date);
    }
    expect(await repo.findAttachment(pool, live.id)).not.toBeNull();
    expect(await store.stat(live.objectKey)).not.toBeNull();
  });

  it('removes a revoked upload, and an object PUT again meanwhile, once its URL expired', async () => {
    const workspaceId = randomUUID();
    const upload = await storedUpload(workspaceId, new Date(Date.now() - graceMs - 60_000));
    const taskId = randomUUID();
    const attachment = await registered(upload, taskId);
    expect(await repo.deleteTaskAttachments(pool, workspaceId, taskId, (keys) => store.remove(keys))).toBe(1);
    expect(await store.stat(upload.objectKey)).toBeNull();
    expect(await store.stat(attachment.objectKey)).toBeNull();
    // A late PUT with the upload URL (still valid in real life) re-creates the object…
    const url = await store.presignUpload(upload.objectKey, { contentType: 'text/plain', size: 4, signedAt: new Date(), expiresInSeconds: 60 });
    expect((await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'late' })).status).toBe(200);
    const before = await removedCount('revoked_upload');

    const report = await sweep();

    // …and the sweep removes both the row and that object.
    expect(report.revokedUploads).toBeGreaterThanOrEqual(1);
    expect(await removedCount('revoked_upload')).toBeGreaterThanOrEqual(before + 1);
    expect(await repo.findUpload(pool, workspaceId, upload.id)).toBeNull();
    expect(await store.stat(upload.objectKey)).toBeNull();
  });

  it('never deletes a registered attachment; clears its upload object once, after the URL expired', async () => {
    const workspace = await createWorkspace();
    const project = await createProject(keyOf(workspace));
    const task = await createTask(keyOf(workspace), { projectId: project.id, listId: project.defaultListId });
    const workspaceId = workspace.workspace.id;
    const expiredUpload = await storedUpload(workspaceId, new Date(Date.now() - 30 * day));
    const expired = await registered(expiredUpload, task.id);
    const validUpload = await storedUpload(workspaceId, new Date(Date.now() + 7 * day));
    const valid = await registered(validUpload, task.id);
    const legacyUpload = await storedUpload(workspaceId, new Date(Date.now() - 30 * day));
    const legacy = await registered(legacyUpload, task.id, { legacy: true });
    const before = await removedCount('registered_upload');

    const report = await sweep();

    expect(report.clearedUploadObjects).toBeGreaterThanOrEqual(1);
    expect(await removedCount('registered_upload')).toBeGreaterThanOrEqual(before + 1);
    for (const attachment of [expired, valid, legacy]) {
      expect(await repo.findAttachment(pool, attachment.id)).not.toBeNull();
      expect(await store.stat(attachment.objectKey)).not.toBeNull();
    }
    // The expired upload's object is gone (the attachment has its own copy); the valid one's URL may
    // still write, so it waits; a pre-migration attachment still serves its upload key, which stays.
    expect(await store.stat(expiredUpload.objectKey)).toBeNull();
    expect(await store.stat(validUpload.objectKey)).not.toBeNull();
    expect(legacy.objectKey).toBe(legacyUpload.objectKey);
    // Marked cleared, so later sweeps skip it; the others are not marked.
    const cleared = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM uploads WHERE id = ANY($1::uuid[]) AND upload_object_cleared_at IS NOT NULL',
      [[expired.id, valid.id, legacy.id]],
    );
    expect(cleared.rows[0]?.n).toBe(1);
    // The foreign key guards the race where a registration lands between the sweeper's query and its delete.
    expect(await repo.deleteUnregisteredUpload(pool, expiredUpload.id, () => Promise.reject(new Error('must not be called')))).toBe(false);
  });

  it('removes an expired unregistered upload together with a copy a failed registration left', async () => {
    const workspaceId = randomUUID();
    const upload = await storedUpload(workspaceId, new Date(Date.now() - graceMs - 60_000));
    // A registration that copied the bytes and then lost its database transaction (crash, restart).
    const leftover = attachmentKeyOf(workspaceId, upload.id);
    expect(await store.copy(upload.objectKey, leftover)).toBe(true);

    await sweep();

    expect(await repo.findUpload(pool, workspaceId, upload.id)).toBeNull();
    expect(await store.stat(upload.objectKey)).toBeNull();
    expect(await store.stat(leftover)).toBeNull();
  });

  it('runs on one replica at a time: skips while another holds the advisory lock', async () => {
    const other = new pg.Client({ connectionString: stack.databaseUrl });
    await other.connect();
    try {
      const { rows } = await other.query<{ locked: boolean }>("SELECT pg_try_advisory_lock(hashtext('attachments:sweeper')) AS locked");
      if (rows[0]?.locked !== true) throw new Error('could not take the sweeper lock for the test');
      expect((await sweeper.runOnce()).ran).toBe(false);
      await other.query("SELECT pg_advisory_unlock(hashtext('attachments:sweeper'))");
      expect((await sweep()).ran).toBe(true);
    } finally {
      await other.end();
    }
  });

  it('stops on request and runs on its interval', async () => {
    const periodic = createSweeper({
      pool,
      store,
      tasks,
      metrics,
      logger: createLogger('sweeper-test', 'silent'),
      intervalMs: 50,
      batchSize: 100,
      uploadGraceMs: graceMs,
    });
    const startedAt = Date.now();
    periodic.start();
    await new Promise((resolve) => setTimeout(resolve, 400));
    await periodic.stop();
    const lastSuccess = (await registry.getSingleMetric('attachment_sweeper_last_success_timestamp_seconds')?.get())?.values[0]?.value ?? 0;
    expect(lastSuccess * 1000).toBeGreaterThanOrEqual(startedAt - 1000);
  });
});
