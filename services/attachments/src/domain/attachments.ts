import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { DomainError, invalid, notFound, recordAudit, type Logger, type Pool } from '@tws/common';
import type { TasksPort } from '../clients/tasks.js';
import type { AttachmentMetrics } from '../metrics.js';
import type { ObjectStore } from '../store/object-store.js';
import * as repo from '../store/repository.js';
import { attachmentKeyOf, objectKeyOf } from './keys.js';
import { checkSizeWithinPlan, UPLOAD_URL_TTL_SECONDS } from './limits.js';

export interface AttachmentsDeps {
  pool: Pool;
  store: ObjectStore;
  tasks: TasksPort;
  metrics: AttachmentMetrics;
  logger: Logger;
  downloadUrlTtlSeconds: number;
}

/** A new upload: the id its attachment will have, and the presigned PUT that accepts its bytes. */
export interface NewUpload {
  id: string;
  uploadUrl: string;
  expiresAt: Date;
}

/**
 * A registration request once its fields passed the edge's checks (ids are lowercase UUIDs, the name
 * sanitised, the type a valid media type, the size a positive integer).
 */
export interface Registration {
  workspaceId: string;
  taskId: string;
  uploadId: string;
  name: string;
  contentType: string;
  size: number;
}

function sameToken(presented: string, stored: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(stored);
  return a.length === b.length && timingSafeEqual(a, b);
}

const notUploaded = 'the file has not been uploaded yet: PUT it to the uploadUrl first';

/** The use cases of the attachments context: upload sessions, registration, listing, download, removal. */
export function attachmentsDomain(deps: AttachmentsDeps) {
  const { pool, store, tasks, metrics } = deps;

  async function requireTask(workspaceId: string, taskId: string): Promise<void> {
    if (!(await tasks.taskExists(workspaceId, taskId))) throw notFound('task not found');
  }

  return {
    /** Checks the size against the workspace's plan, records the upload and signs its PUT URL. */
    async createUpload(workspaceId: string, contentType: string, size: number): Promise<NewUpload> {
      checkSizeWithinPlan(size, await tasks.workspacePlan(workspaceId));

      const id = randomUUID();
      const objectKey = objectKeyOf(workspaceId, id);
      // Whole seconds: the URL's X-Amz-Date has no fractions, and expires_at must not outlive it.
      const signedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
      const expiresAt = new Date(signedAt.getTime() + UPLOAD_URL_TTL_SECONDS * 1000);
      await repo.insertUpload(pool, { id, workspaceId, objectKey, contentType, size, expiresAt });
      const uploadUrl = await store.presignUpload(objectKey, { contentType, size, signedAt, expiresInSeconds: UPLOAD_URL_TTL_SECONDS });
      metrics.uploadsRequested.inc();
      return { id, uploadUrl, expiresAt };
    },

    /**
     * Registers an uploaded file on a task: the same attachment again for a repeated registration on
     * that task (`created` false), ALREADY_EXISTS on another task.
     */
    async registerAttachment(registration: Registration): Promise<{ record: repo.AttachmentRecord; created: boolean }> {
      const { workspaceId, taskId, uploadId, name, contentType, size } = registration;
      await requireTask(workspaceId, taskId);
      // Under the upload's row lock: registrations of one upload run one at a time, so the attachment's
      // own copy is written exactly once, before its row exists, and never again (immutable afterwards).
      const outcome = await repo.withUploadLocked(pool, workspaceId, uploadId, async (client, upload) => {
        if (!upload || upload.revokedAt) throw notFound('attachment upload not found');
        const existing = await repo.findAttachment(client, uploadId);
        if (existing) return { record: existing, created: false, upload };

        if (contentType !== upload.contentType) {
          throw invalid(`contentType "${contentType}" differs from the one declared for the upload ("${upload.contentType}")`);
        }
        if (size !== upload.size) throw invalid(`size ${size} differs from the one declared for the upload (${upload.size})`);
        const stored = await store.stat(upload.objectKey);
        if (!stored) throw invalid(notUploaded);
        if (stored.size !== size) throw invalid(`the uploaded file has ${stored.size} bytes, not the declared ${size}`);
        if (stored.contentType !== contentType) {
          throw invalid(`the uploaded file has content type "${stored.contentType}", not the declared "${contentType}"`);
        }
        // Server-side copy to a key no upload URL can write. The upload URL only accepts this exact size
        // and type, so whichever bytes were there when copied passed the checks above. A crash before the
        // commit leaves the copy for a retry to overwrite or for the sweeper (with the upload) to remove.
        const objectKey = attachmentKeyOf(workspaceId, uploadId);
        if (!(await store.copy(upload.objectKey, objectKey))) throw invalid(notUploaded);
        const inserted = await repo.insertAttachmentOnce(client, {
          id: uploadId,
          workspaceId,
          taskId,
          name,
          contentType,
          size,
          downloadToken: randomBytes(32).toString('base64url'),
          objectKey,
        });
        if (inserted.created) {
          await recordAudit(client, { workspaceId, action: 'attachment.created', resourceType: 'attachment', resourceId: uploadId });
        }
        return { ...inserted, upload };
      });
      if (!outcome.created) return repeated(outcome.record, taskId);
      // The upload object is not needed any more; if this fails, the sweeper removes it after the URL expired.
      await store.remove([outcome.upload.objectKey]).catch((error: unknown) => {
        deps.logger.warn({ err: error, attachmentId: uploadId }, 'could not remove a registered upload object; the sweeper will');
      });
      metrics.registered.inc();
      metrics.bytesRegistered.inc(size);
      return { record: outcome.record, created: true };
    },

    /** The task's attachments, oldest first; NOT_FOUND unless the task exists in the workspace. */
    async listTaskAttachments(workspaceId: string, taskId: string): Promise<repo.AttachmentRecord[]> {
      await requireTask(workspaceId, taskId);
      return repo.listTaskAttachments(pool, workspaceId, taskId);
    },

    /** A presigned GET for the attachment, if the token is its download token. */
    async getDownloadUrl(attachmentId: string, downloadToken: string): Promise<{ url: string; expiresInSeconds: number }> {
      const record = await repo.findAttachment(pool, attachmentId);
      // Unknown id and wrong token answer alike, so ids cannot be probed.
      if (!record || !sameToken(downloadToken, record.downloadToken)) throw notFound('attachment not found');
      const url = await store.presignDownload(record.objectKey, {
        fileName: record.name,
        contentType: record.contentType,
        expiresInSeconds: deps.downloadUrlTtlSeconds,
      });
      return { url, expiresInSeconds: deps.downloadUrlTtlSeconds };
    },

    /** What the workspace stores: its registered attachments and their bytes (GET /v1/usage). */
    async workspaceUsage(workspaceId: string): Promise<{ count: number; bytes: number }> {
      return repo.workspaceUsage(pool, workspaceId);
    },

    /** Removes the task's attachments and their objects (after the task was deleted); returns how many. */
    async deleteTaskAttachments(workspaceId: string, taskId: string): Promise<number> {
      const removedCount = await repo.deleteTaskAttachments(pool, workspaceId, taskId, (keys) => store.remove(keys));
      if (removedCount > 0) deps.logger.info({ workspaceId, taskId, removedCount }, 'attachments of a deleted task removed');
      return removedCount;
    },
  };
}

/** A second registration of one upload: the same attachment on the same task, a conflict elsewhere. */
function repeated(existing: repo.AttachmentRecord, taskId: string): { record: repo.AttachmentRecord; created: false } {
  if (existing.taskId !== taskId) throw new DomainError('already_exists', 'this upload is already attached to another task');
  return { record: existing, created: false };
}

export type Attachments = ReturnType<typeof attachmentsDomain>;
