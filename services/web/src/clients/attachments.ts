import * as grpc from '@grpc/grpc-js';
import { grpcClientOptions, unaryApi, type GrpcClientMetrics, type UnaryApi } from '@tws/common';
import { loadAttachmentsProto } from '@tws/proto-types';
import type { AttachmentsServiceClient } from '@tws/proto-types/generated/attachments/v1/AttachmentsService';

/** The unary RPCs the web service calls on attachments.v1.AttachmentsService (the task page's list). */
const attachmentsRpcs = ['ListTaskAttachments'] as const;

export type AttachmentsApi = UnaryApi<AttachmentsServiceClient, (typeof attachmentsRpcs)[number]>;

/** The attachments service's client (lazily connected by grpc-js), with the shared client options and metrics. */
export function connectAttachments(target: string, deadlineMs: number, metrics: GrpcClientMetrics): { api: AttachmentsApi; close(): void } {
  const client = new (loadAttachmentsProto().attachments.v1.AttachmentsService)(
    target,
    grpc.credentials.createInsecure(),
    grpcClientOptions('attachments.v1.AttachmentsService', metrics),
  );
  return { api: unaryApi(client, attachmentsRpcs, deadlineMs), close: () => client.close() };
}
