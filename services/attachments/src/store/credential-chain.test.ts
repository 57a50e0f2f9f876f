import * as grpc from '@grpc/grpc-js';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { callUnary, ConfigError } from '@tws/common';
import { freePort, nodeFlags, repoRoot, startProcess, waitUntil, type ManagedProcess } from '@tws/devstack';
import { loadAttachmentsProto } from '@tws/proto-types';
import type { AttachmentsServiceClient } from '@tws/proto-types/generated/attachments/v1/AttachmentsService';
import { createWorkspace } from '../../../../test/support/admin.js';
import { createProject, createTask, keyOf } from '../../../../test/support/fixtures.js';
import { loadConfig } from '../config.js';

/*
 * Without S3_ACCESS_KEY / S3_SECRET_KEY the service uses the AWS SDK's default credential chain
 * (IRSA's web identity token, instance roles, AWS_* variables …). Here: a real attachments process
 * against the test stack's MinIO with only the standard AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY set.
 */

const stack = inject('stack');
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

interface Instance {
  process: ManagedProcess;
  opsUrl: string;
  grpcTarget: string;
}

/** An attachments process with no S3 keys, the given AWS_* credentials, and nothing reaching off loopback. */
async function startAttachments(aws: { id: string; secret: string }): Promise<Instance> {
  const [opsPort, grpcPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: mkdtempSync(path.join(os.tmpdir(), 'attachments-aws-home-')),
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    OPS_PORT: String(opsPort),
    GRPC_PORT: String(grpcPort),
    DATABASE_URL: stack.databaseUrl,
    S3_ENDPOINT: stack.s3.endpoint,
    S3_PUBLIC_ENDPOINT: stack.s3.endpoint,
    TASKS_GRPC_TARGET: stack.tasksGrpcTarget,
    SWEEP_INTERVAL_MS: '0',
    AWS_ACCESS_KEY_ID: aws.id,
    AWS_SECRET_ACCESS_KEY: aws.secret,
    // The chain's last resort is the EC2 instance metadata endpoint: keep traffic on loopback.
    AWS_EC2_METADATA_DISABLED: 'true',
  };
  const child = startProcess(`attachments-aws-${opsPort}`, process.execPath, [...nodeFlags, path.join(repoRoot, 'services/attachments/dist/main.js')], {
    logDir: stack.logDir,
    env,
  });
  const opsUrl = `http://127.0.0.1:${opsPort}`;
  await waitUntil('attachments (credential chain)', async () => (await fetch(`${opsUrl}/healthz`)).ok, { timeoutMs: 60_000, process: child });
  return { process: child, opsUrl, grpcTarget: `127.0.0.1:${grpcPort}` };
}

describe('attachments: S3 credentials from the default AWS credential chain', () => {
  const instances: Instance[] = [];
  let client: AttachmentsServiceClient | undefined;

  beforeAll(async () => {
    instances.push(await startAttachments({ id: stack.s3.accessKey, secret: stack.s3.secretKey }));
  });
  afterAll(async () => {
    client?.close();
    await Promise.all(instances.map((instance) => instance.process.stop()));
  });

  it('refuses one S3 key without the other at start, naming the missing variable', () => {
    const base = { DATABASE_URL: stack.databaseUrl, S3_ENDPOINT: stack.s3.endpoint, S3_PUBLIC_ENDPOINT: stack.s3.endpoint };
    expect(() => loadConfig({ ...base, S3_ACCESS_KEY: 'key' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, S3_ACCESS_KEY: 'key' })).toThrow(/S3_SECRET_KEY/);
    expect(loadConfig(base).S3_ACCESS_KEY).toBeUndefined();
  });

  it('is ready and uploads, registers and serves a file with only AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY', async () => {
    const instance = instances[0]!;
    // /readyz checks the bucket with a signed HeadBucket.
    await waitUntil('attachments ready', async () => (await fetch(`${instance.opsUrl}/readyz`)).ok, { timeoutMs: 30_000 });

    const proto = loadAttachmentsProto();
    client = new proto.attachments.v1.AttachmentsService(instance.grpcTarget, grpc.credentials.createInsecure());
    const workspace = await createWorkspace();
    const project = await createProject(keyOf(workspace));
    const task = await createTask(keyOf(workspace), { projectId: project.id, listId: project.defaultListId });
    const bytes = randomBytes(2048);
    const workspaceId = workspace.workspace.id;

    const upload = await callUnary(client, client.createUpload, { workspaceId, contentType: 'application/octet-stream', sizeBytes: bytes.length });
    const put = await fetch(upload.uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(bytes) });
    expect(put.status, await put.text()).toBe(200);
    const registered = await callUnary(client, client.registerAttachment, {
      workspaceId,
      taskId: task.id,
      attachmentId: upload.attachmentId,
      name: 'chain.bin',
      contentType: 'application/octet-stream',
      sizeBytes: bytes.length,
    });
    expect(registered.created).toBe(true);
    const download = await callUnary(client, client.getDownloadUrl, {
      attachmentId: upload.attachmentId,
      downloadToken: registered.attachment?.downloadToken ?? '',
    });
    const response = await fetch(download.url);
    expect(response.status).toBe(200);
    expect(sha256(new Uint8Array(await response.arrayBuffer()))).toBe(sha256(bytes));
  });

  it('uses those credentials: with a wrong AWS secret the object store check fails and the instance stays unready', async () => {
    const wrong = await startAttachments({ id: stack.s3.accessKey, secret: 'not-the-secret' });
    instances.push(wrong);
    for (let probe = 0; probe < 5; probe++) {
      expect((await fetch(`${wrong.opsUrl}/readyz`)).status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  });
});
