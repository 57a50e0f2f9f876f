import { grpcServerMetrics, unary, type GrpcServiceRegistration, type Logger } from '@tws/common';
import { loadAttachmentsProto } from '@tws/proto-types';
import type { AttachmentsServiceHandlers } from '@tws/proto-types/generated/attachments/v1/AttachmentsService';
import type { Registry } from 'prom-client';
import type { AttachmentsService } from './handlers/attachments-service.js';

export const serviceName = 'attachments.v1.AttachmentsService';

/** The gRPC registration of attachments.v1.AttachmentsService (instrumented, DomainError → status). */
export function attachmentsGrpcService(service: AttachmentsService, options: { logger: Logger; registry: Registry }): GrpcServiceRegistration {
  const proto = loadAttachmentsProto();
  const instrument = { service: serviceName, logger: options.logger, metrics: grpcServerMetrics(options.registry) };
  const implementation: AttachmentsServiceHandlers = {
    CreateUpload: unary('CreateUpload', (request) => service.createUpload(request), instrument),
    RegisterAttachment: unary('RegisterAttachment', (request) => service.registerAttachment(request), instrument),
    ListTaskAttachments: unary('ListTaskAttachments', (request) => service.listTaskAttachments(request), instrument),
    GetDownloadUrl: unary('GetDownloadUrl', (request) => service.getDownloadUrl(request), instrument),
    DeleteTaskAttachments: unary('DeleteTaskAttachments', (request) => service.deleteTaskAttachments(request), instrument),
  };
  return { name: serviceName, definition: proto.attachments.v1.AttachmentsService.service, implementation };
}
