import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { DomainError, invalid, notFound, type Logger, type Pool } from '@tws/common';
import type { Attachment } from '@tws/proto-types/generated/attachments/v1/Attachment';
import type { CreateUploadRequest__Output } from '@tws/proto-types/generated/attachments/v1/CreateUploadRequest';
import type { CreateUploadResponse } from '@tws/proto-types/generated/attachments/v1/CreateUploadResponse';
import type { DeleteTaskAttachmentsRequest__Output } from '@tws/proto-types/generated/attachments/v1/DeleteTaskAttachmentsRequest';
import type { DeleteTaskAttachmentsResponse } from '@tws/proto-types/generated/attachments/v1/DeleteTaskAttachmentsResponse';
import type { GetDownloadUrlRequest__Output } from '@tws/proto-types/generated/attachments/v1/GetDownloadUrlRequest';
import type { GetDownloadUrlResponse } from '@tws/proto-types/generated/attachments/v1/GetDownloadUrlResponse';
import type { ListTaskAttachmentsRequest__Output } from '@tws/proto-types/generated/attachments/v1/ListTaskAttachmentsRequest';
import type { ListTaskAttachmentsResponse } from '@tws/proto-types/generated/attachments/v1/ListTaskAttachmentsResponse';
import type { RegisterAttachmentRequest__Output } from '@tws/proto-types/generated/attachments/v1/RegisterAttachmentRequest';
import type { RegisterAttachmentResponse } from '@tws/proto-types/generated/attachments/v1/RegisterAttachmentResponse';
import type { TasksPort } from '../clients/tasks.js';
import * as repo from '../store/repository.js';
import { checkSizeWithinPlan, parseDeclaredSize, UPLOAD_URL_TTL_SECONDS, validateContentType } from '../domain/limits.js';
import { attachmentKeyOf, objectKeyOf } from '../domain/keys.js';
import { sanitiseFileName } from '../domain/names.js';
import type { AttachmentMetrics } from '../metrics.js';
import type { ObjectStore } from '../store/object-store.js';

export interface AttachmentsDeps {
  pool: Pool;
  store: ObjectStore;
  tasks: TasksPort;
  metrics: AttachmentMetrics;
  logger: Logger;
  downloadUrlTtlSeconds: number;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => uuidPattern.test(value);

/** The workspace id comes from the gateway (derived from credentials), so a malformed one is a bug upstream. */
function requireWorkspaceId(value: string): string {
  if (!isUuid(value)) throw invalid('workspace_id must be a UUID');
  return value.toLowerCase();
}

/** Ids from the path or body: one that is not a UUID names nothing, so it is "not found". */
function existingId(value: string, what: string): string {
  if (!isUuid(value)) throw notFound(`${what} not found`);
  return value.toLowerCase();
}

function toProto(record: repo.AttachmentRecord): Attachment {
  return {
    id: record.id,
    taskId: record.taskId,
    name: record.name,
    contentType: record.contentType,
    sizeBytes: String(record.size),
    createdAt: record.createdAt.toISOString(),
    downloadToken: record.downloadToken,
  };
}

function sameToken(presented: string, stored: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(stored);
  return a.length === b.length && timingSafeEqual(a, b);
}

const notUploaded = 'the file has not been uploaded yet: PUT it to the uploadUrl first';

/** The RPCs of attachments.v1.AttachmentsService as plain async functions. */
export function attachmentsService(deps: AttachmentsDeps) {
  const { pool, store, tasks, metrics } = deps;

  async function requireTask(workspaceId: string, taskId: string): Promise<void> {
    if (!(await tasks.taskExists(workspaceId, taskId))) throw notFound('task not found');
  }

  return {
    async createUpload(request: CreateUploadRequest__Output): Promise<CreateUploadResponse> {
      const workspaceId = requireWorkspaceId(request.workspaceId);
      const contentType = validateContentType(request.contentType);
      const size = parseDeclaredSize(request.sizeBytes);
      checkSizeWithinPlan(size, await tasks.workspacePlan(workspaceId));

      const id = randomUUID();
      const objectKey = objectKeyOf(workspaceId, id);
      // Whole seconds: the URL's X-Amz-Date has no fractions, and expires_at must not outlive it.
      const signedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
      const expiresAt = new Date(signedAt.getTime() + UPLOAD_URL_TTL_SECONDS * 1000);
      await repo.insertUpload(pool, { id, workspaceId, objectKey, contentType, size, expiresAt });
      const uploadUrl = await store.presignUpload(objectKey, { contentType, size, signedAt, expiresInSeconds: UPLOAD_URL_TTL_SECONDS });
      metrics.uploadsRequested.inc();
      return { attachmentId: id, uploadUrl, expiresAt: expiresAt.toISOString() };
    },

    async registerAttachment(request: RegisterAttachmentRequest__Output): Promise<RegisterAttachmentResponse> {
      const workspaceId = requireWorkspaceId(request.workspaceId);
      const taskId = existingId(request.taskId, 'task');
      const uploadId = existingId(request.attachmentId, 'attachment upload');
      const name = sanitiseFileName(request.name);
      const contentType = validateContentType(request.contentType);
      const size = parseDeclaredSize(request.sizeBytes);

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
        return { ...inserted, upload };
      });
      if (!outcome.created) return repeated(outcome.record, taskId);
      // The upload object is not needed any more; if this fails, the sweeper removes it after the URL expired.
      await store.remove([outcome.upload.objectKey]).catch((error: unknown) => {
        deps.logger.warn({ err: error, attachmentId: uploadId }, 'could not remove a registered upload object; the sweeper will');
      });
      metrics.registered.inc();
      metrics.bytesRegistered.inc(size);
      return { attachment: toProto(outcome.record), created: true };
    },

    async listTaskAttachments(request: ListTaskAttachmentsRequest__Output): Promise<ListTaskAttachmentsResponse> {
      const workspaceId = requireWorkspaceId(request.workspaceId);
      const taskId = existingId(request.taskId, 'task');
      await requireTask(workspaceId, taskId);
      const records = await repo.listTaskAttachments(pool, workspaceId, taskId);
      return { attachments: records.map(toProto) };
    },

    async getDownloadUrl(request: GetDownloadUrlRequest__Output): Promise<GetDownloadUrlResponse> {
      const id = existingId(request.attachmentId, 'attachment');
      const record = await repo.findAttachment(pool, id);
      // Unknown id and wrong token answer alike, so ids cannot be probed.
      if (!record || !sameToken(request.downloadToken, record.downloadToken)) throw notFound('attachment not found');
      const url = await store.presignDownload(record.objectKey, {
        fileName: record.name,
        contentType: record.contentType,
        expiresInSeconds: deps.downloadUrlTtlSeconds,
      });
      return { url, expiresInSeconds: deps.downloadUrlTtlSeconds };
    },

    async deleteTaskAttachments(request: DeleteTaskAttachmentsRequest__Output): Promise<DeleteTaskAttachmentsResponse> {
      const workspaceId = requireWorkspaceId(request.workspaceId);
      if (!isUuid(request.taskId)) return { removedCount: 0 };
      const removedCount = await repo.deleteTaskAttachments(pool, workspaceId, request.taskId.toLowerCase(), (keys) => store.remove(keys));
      if (removedCount > 0) deps.logger.info({ workspaceId, taskId: request.taskId, removedCount }, 'attachments of a deleted task removed');
      return { removedCount };
    },
  };
}

/** A second registration of one upload: the same attachment on the same task, a conflict elsewhere. */
function repeated(existing: repo.AttachmentRecord, taskId: string): RegisterAttachmentResponse {
  if (existing.taskId !== taskId) throw new DomainError('already_exists', 'this upload is already attached to another task');
  return { attachment: toProto(existing), created: false };
}

export type AttachmentsService = ReturnType<typeof attachmentsService>;
