import { invalid, isUuid, notFound, unary, type GrpcServerMetrics, type GrpcServiceRegistration, type Logger } from '@tws/common';
import { loadAttachmentsProto } from '@tws/proto-types';
import type { Attachment } from '@tws/proto-types/generated/attachments/v1/Attachment';
import type { AttachmentsServiceHandlers } from '@tws/proto-types/generated/attachments/v1/AttachmentsService';
import type { Attachments } from '../domain/attachments.js';
import { parseDeclaredSize, plans, uploadLimitBytes, validateContentType } from '../domain/limits.js';
import { sanitiseFileName } from '../domain/names.js';
import type { AttachmentRecord } from '../store/repository.js';

export const serviceName = 'attachments.v1.AttachmentsService';

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

function toProto(record: AttachmentRecord): Attachment {
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

/**
 * The gRPC registration of attachments.v1.AttachmentsService (instrumented, DomainError → status):
 * checks and normalises each request's fields in the order they are declared (the first bad one
 * answers), calls the use case, maps its result to the response.
 */
export function attachmentsGrpcService(attachments: Attachments, options: { logger: Logger; metrics: GrpcServerMetrics }): GrpcServiceRegistration {
  const proto = loadAttachmentsProto();
  const instrument = { service: serviceName, logger: options.logger, metrics: options.metrics };
  const implementation: AttachmentsServiceHandlers = {
    CreateUpload: unary('CreateUpload', async (request) => {
      const workspaceId = requireWorkspaceId(request.workspaceId);
      const contentType = validateContentType(request.contentType);
      const size = parseDeclaredSize(request.sizeBytes);
      const upload = await attachments.createUpload(workspaceId, contentType, size);
      return { attachmentId: upload.id, uploadUrl: upload.uploadUrl, expiresAt: upload.expiresAt.toISOString() };
    }, instrument),
    RegisterAttachment: unary('RegisterAttachment', async (request) => {
      const { record, created } = await attachments.registerAttachment({
        workspaceId: requireWorkspaceId(request.workspaceId),
        taskId: existingId(request.taskId, 'task'),
        uploadId: existingId(request.attachmentId, 'attachment upload'),
        name: sanitiseFileName(request.name),
        contentType: validateContentType(request.contentType),
        size: parseDeclaredSize(request.sizeBytes),
      });
      return { attachment: toProto(record), created };
    }, instrument),
    ListTaskAttachments: unary('ListTaskAttachments', async (request) => {
      const workspaceId = requireWorkspaceId(request.workspaceId);
      const taskId = existingId(request.taskId, 'task');
      return { attachments: (await attachments.listTaskAttachments(workspaceId, taskId)).map(toProto) };
    }, instrument),
    GetDownloadUrl: unary('GetDownloadUrl', async (request) => {
      const attachmentId = existingId(request.attachmentId, 'attachment');
      return attachments.getDownloadUrl(attachmentId, request.downloadToken);
    }, instrument),
    DeleteTaskAttachments: unary('DeleteTaskAttachments', async (request) => {
      const workspaceId = requireWorkspaceId(request.workspaceId);
      // A task id that is not a UUID names no task, so it has nothing to remove.
      if (!isUuid(request.taskId)) return { removedCount: 0 };
      return { removedCount: await attachments.deleteTaskAttachments(workspaceId, request.taskId.toLowerCase()) };
    }, instrument),
    GetWorkspaceUsage: unary('GetWorkspaceUsage', async (request) => {
      const usage = await attachments.workspaceUsage(requireWorkspaceId(request.workspaceId));
      return {
        attachmentCount: usage.count,
        storedBytes: String(usage.bytes),
        uploadLimits: plans.map((plan) => ({ plan, maxFileBytes: String(uploadLimitBytes[plan]) })),
      };
    }, instrument),
  };
  return { name: serviceName, definition: proto.attachments.v1.AttachmentsService.service, implementation };
}
