import * as grpc from '@grpc/grpc-js';
import { grpcClientOptions, unaryApi, type GrpcClientMetrics, type UnaryApi } from '@tws/common';
import { loadWebhooksProto } from '@tws/proto-types';
import type { WebhooksServiceClient } from '@tws/proto-types/generated/webhooks/v1/WebhooksService';

/** The unary RPCs the web service calls on webhooks.v1.WebhooksService (the webhooks settings). */
const webhooksRpcs = ['CreateEndpoint', 'ListEndpoints', 'DeleteEndpoint', 'ListDeliveries', 'RedeliverDelivery'] as const;

export type WebhooksApi = UnaryApi<WebhooksServiceClient, (typeof webhooksRpcs)[number]>;

/**
 * The client of the webhooks service (lazily connected by grpc-js, so the app starts and is ready
 * while the webhooks service is down: only the webhooks pages say so), with the shared client
 * options and metrics.
 */
export function connectWebhooks(target: string, deadlineMs: number, metrics: GrpcClientMetrics): { api: WebhooksApi; close(): void } {
  const proto = loadWebhooksProto().webhooks.v1;
  const client = new proto.WebhooksService(target, grpc.credentials.createInsecure(), grpcClientOptions('webhooks.v1.WebhooksService', metrics));
  return { api: unaryApi(client, webhooksRpcs, deadlineMs), close: () => client.close() };
}
