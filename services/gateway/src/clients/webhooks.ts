import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { loadWebhooksProto } from '@tws/proto-types';
import type { WebhooksServiceClient } from '@tws/proto-types/generated/webhooks/v1/WebhooksService';

/** The unary RPCs of webhooks.v1.WebhooksService the gateway calls. */
const rpcNames = [
  'CreateEndpoint',
  'ListEndpoints',
  'DeleteEndpoint',
  'ListDeliveries',
  'RedeliverDelivery',
] as const satisfies readonly (keyof WebhooksServiceClient)[];

type RpcName = (typeof rpcNames)[number];
// The generated clients' last overload is `(request, callback)`; conditional types read that one.
type RequestOf<M> = M extends (request: infer Req, callback: grpc.requestCallback<infer _Res>) => grpc.ClientUnaryCall ? Req : never;
type ResponseOf<M> = M extends (request: infer _Req, callback: grpc.requestCallback<infer Res>) => grpc.ClientUnaryCall ? Res : never;

/** Promise-returning WebhooksService calls with the gateway's deadline: `await webhooks.ListEndpoints({ … })`. */
export type WebhooksApi = {
  [Name in RpcName]: (request: RequestOf<WebhooksServiceClient[Name]>) => Promise<ResponseOf<WebhooksServiceClient[Name]>>;
};

/** One channel to the webhooks service (pass the same client options as the other backends). */
export function connectWebhooks(target: string, options: grpc.ClientOptions): WebhooksServiceClient {
  const proto = loadWebhooksProto();
  return new proto.webhooks.v1.WebhooksService(target, grpc.credentials.createInsecure(), options);
}

/**
 * `deadlineMs` should leave room for the registration's DNS check (a few seconds at most); the
 * gateway's GRPC_DEADLINE_MS (10 s) does.
 */
export function createWebhooksApi(client: WebhooksServiceClient, deadlineMs: number): WebhooksApi {
  const api: Partial<Record<RpcName, (request: never) => Promise<unknown>>> = {};
  for (const name of rpcNames) {
    const method = client[name] as (request: unknown, callback: grpc.requestCallback<unknown>) => grpc.ClientUnaryCall;
    api[name] = (request: unknown) => callUnary(client, method, request, { deadlineMs });
  }
  return api as WebhooksApi;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The webhooks service, promisified, with the configured deadline (GRPC_DEADLINE_MS). */
    webhooksApi: WebhooksApi;
  }
}
