import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { loadAttachmentsProto } from '@tws/proto-types';
import type { AttachmentsServiceClient } from '@tws/proto-types/generated/attachments/v1/AttachmentsService';

/** The unary RPCs of attachments.v1.AttachmentsService the gateway calls. */
const rpcNames = [
  'CreateUpload',
  'RegisterAttachment',
  'ListTaskAttachments',
  'GetDownloadUrl',
  'DeleteTaskAttachments',
] as const satisfies readonly (keyof AttachmentsServiceClient)[];

type RpcName = (typeof rpcNames)[number];
// The generated clients' last overload is `(request, callback)`; conditional types read that one.
type RequestOf<M> = M extends (request: infer Req, callback: grpc.requestCallback<infer _Res>) => grpc.ClientUnaryCall ? Req : never;
type ResponseOf<M> = M extends (request: infer _Req, callback: grpc.requestCallback<infer Res>) => grpc.ClientUnaryCall ? Res : never;

/** Promise-returning AttachmentsService calls with the gateway's deadline: `await attachments.CreateUpload({ … })`. */
export type AttachmentsApi = {
  [Name in RpcName]: (request: RequestOf<AttachmentsServiceClient[Name]>) => Promise<ResponseOf<AttachmentsServiceClient[Name]>>;
};

/** One channel to the attachments service (pass the same client options as the other backends). */
export function connectAttachments(target: string, options: grpc.ClientOptions): AttachmentsServiceClient {
  const proto = loadAttachmentsProto();
  return new proto.attachments.v1.AttachmentsService(target, grpc.credentials.createInsecure(), options);
}

export function createAttachmentsApi(client: AttachmentsServiceClient, deadlineMs: number): AttachmentsApi {
  const api: Partial<Record<RpcName, (request: never) => Promise<unknown>>> = {};
  for (const name of rpcNames) {
    const method = client[name] as (request: unknown, callback: grpc.requestCallback<unknown>) => grpc.ClientUnaryCall;
    api[name] = (request: unknown) => callUnary(client, method, request, { deadlineMs });
  }
  return api as AttachmentsApi;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The attachments service, promisified, with the configured deadline (GRPC_DEADLINE_MS). */
    attachmentsApi: AttachmentsApi;
  }
}
