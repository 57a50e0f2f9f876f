import { z } from 'zod';
import type * as grpc from '@grpc/grpc-js';
import { grpcServerMetrics, invalid, unary, type GrpcServiceRegistration } from '@tws/common';
import { loadWebhooksProto } from '@tws/proto-types';
import { taskEventKinds as eventTypes } from '@tws/contracts';
import type { Attempt } from '@tws/proto-types/generated/webhooks/v1/Attempt';
import type { CreateEndpointResponse } from '@tws/proto-types/generated/webhooks/v1/CreateEndpointResponse';
import type { DeleteEndpointResponse } from '@tws/proto-types/generated/webhooks/v1/DeleteEndpointResponse';
import type { Delivery } from '@tws/proto-types/generated/webhooks/v1/Delivery';
import type { Endpoint } from '@tws/proto-types/generated/webhooks/v1/Endpoint';
import type { ListDeliveriesResponse } from '@tws/proto-types/generated/webhooks/v1/ListDeliveriesResponse';
import type { ListEndpointsResponse } from '@tws/proto-types/generated/webhooks/v1/ListEndpointsResponse';
import type { RedeliverDeliveryResponse } from '@tws/proto-types/generated/webhooks/v1/RedeliverDeliveryResponse';
import type { RotateEndpointSecretResponse } from '@tws/proto-types/generated/webhooks/v1/RotateEndpointSecretResponse';
import type { SendTestEventResponse } from '@tws/proto-types/generated/webhooks/v1/SendTestEventResponse';
import type { UpdateEndpointResponse } from '@tws/proto-types/generated/webhooks/v1/UpdateEndpointResponse';
import type { Registry } from 'prom-client';
import { defaultPageSize, listDeliveries, type DeliveryLogDeps } from '../domain/delivery-log.js';
import { deleteEndpoint, listEndpoints, registerEndpoint, type EndpointDeps } from '../domain/endpoints.js';
import { maxOverlapSeconds, rotateSecret, sendTestEvent, updateEndpoint } from '../domain/endpoint-admin.js';
import { redeliver, type RedeliveryDeps } from '../domain/redelivery.js';
import type { DeliveryLogEntry } from '../store/deliveries.js';
import type { EndpointRecord } from '../store/endpoints.js';

/** What the use cases need (domain/), plus the registry of the gRPC server metrics. */
export type WebhooksServiceDeps = EndpointDeps & DeliveryLogDeps & RedeliveryDeps & { registry: Registry };

const serviceName = 'webhooks.v1.WebhooksService';

/** gRPC input is checked like any other edge: ids are UUIDs, kinds are the contract's, sizes bounded. */
const workspaceId = z.string().min(1, 'workspace_id is required').max(200);
const uuid = (field: string) => z.uuid(`${field} must be a UUID`);

const url = z.string().min(1, 'url is required').max(2048, 'url is too long');
const secret = z.string().min(1, 'secret is required').max(1024, 'secret is too long');
const eventKinds = z.array(z.enum(eventTypes, { error: () => `events must be a subset of ${eventTypes.join(', ')}` })).max(3 * 10);
const createSchema = z.object({ workspaceId, url, secret, events: eventKinds });
const listSchema = z.object({ workspaceId });
const endpointRef = z.object({ workspaceId, endpointId: uuid('endpoint id') });
const listDeliveriesSchema = endpointRef.extend({
  pageSize: z.number().int().min(0).max(100, 'page size must be at most 100'),
  pageToken: z.string().max(100),
});
const redeliverSchema = endpointRef.extend({ deliveryId: uuid('delivery id') });
// proto3 optional fields arrive as undefined (or null) when not set; the EventKinds message likewise.
const updateSchema = endpointRef.extend({
  url: url.nullish(),
  events: z.object({ kinds: eventKinds }).nullish(),
  enabled: z.boolean().nullish(),
});
const rotateSchema = endpointRef.extend({
  secret,
  overlapSeconds: z.number().int().min(0).max(maxOverlapSeconds, `overlapSeconds must be at most ${maxOverlapSeconds}`).nullish(),
});

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw invalid(result.error.issues[0]?.message ?? 'invalid request');
}

const reasonNames = { manual: 'DISABLED_REASON_MANUAL', failing: 'DISABLED_REASON_FAILING' } as const;

const toEndpoint = (record: EndpointRecord): Endpoint => ({
  id: record.id,
  url: record.url,
  events: record.events,
  createdAt: record.createdAt.toISOString(),
  enabled: record.disabledAt === null,
  ...(record.disabledAt ? { disabledAt: record.disabledAt.toISOString() } : {}),
  disabledReason: record.disabledReason ? reasonNames[record.disabledReason] : 'DISABLED_REASON_UNSPECIFIED',
  ...(record.previousSecretExpiresAt ? { previousSecretExpiresAt: record.previousSecretExpiresAt.toISOString() } : {}),
});

const stateNames = {
  pending: 'DELIVERY_STATE_PENDING',
  succeeded: 'DELIVERY_STATE_SUCCEEDED',
  failed: 'DELIVERY_STATE_FAILED',
  cancelled: 'DELIVERY_STATE_CANCELLED',
} as const;
const outcomeNames = {
  succeeded: 'ATTEMPT_OUTCOME_SUCCEEDED',
  failed: 'ATTEMPT_OUTCOME_FAILED',
  blocked: 'ATTEMPT_OUTCOME_BLOCKED',
} as const;

const toDelivery = (entry: DeliveryLogEntry): Delivery => ({
  id: entry.id,
  eventId: entry.eventId,
  event: entry.eventType,
  state: stateNames[entry.state],
  createdAt: entry.createdAt.toISOString(),
  ...(entry.redeliveryOf ? { redeliveryOf: entry.redeliveryOf } : {}),
  ...(entry.state === 'pending' ? { nextAttempt: entry.nextAttempt } : {}),
  ...(entry.state === 'pending' && entry.nextAttemptAt ? { nextAttemptAt: entry.nextAttemptAt.toISOString() } : {}),
  attempts: entry.attempts.map(
    (attempt): Attempt => ({
      attempt: attempt.attempt,
      startedAt: attempt.startedAt.toISOString(),
      durationMs: attempt.durationMs,
      outcome: outcomeNames[attempt.outcome],
      ...(attempt.statusCode !== null ? { statusCode: attempt.statusCode } : {}),
      ...(attempt.error !== null ? { error: attempt.error } : {}),
    }),
  ),
});

/**
 * The WebhooksService: each RPC validates its request (zod), calls its use case in domain/ and maps
 * the result to the proto messages. Tests build it without a process around it.
 */
export function webhooksService(deps: WebhooksServiceDeps): GrpcServiceRegistration {
  const proto = loadWebhooksProto();
  const options = { service: serviceName, logger: deps.logger, metrics: grpcServerMetrics(deps.registry) };

  const implementation = {
    CreateEndpoint: unary('CreateEndpoint', async (request: unknown): Promise<CreateEndpointResponse> => {
      const input = parse(createSchema, request);
      return { endpoint: toEndpoint(await registerEndpoint(deps, input)) };
    }, options),

    ListEndpoints: unary('ListEndpoints', async (request: unknown): Promise<ListEndpointsResponse> => {
      const input = parse(listSchema, request);
      return { endpoints: (await listEndpoints(deps, input.workspaceId)).map(toEndpoint) };
    }, options),

    DeleteEndpoint: unary('DeleteEndpoint', async (request: unknown): Promise<DeleteEndpointResponse> => {
      const input = parse(endpointRef, request);
      await deleteEndpoint(deps, input.workspaceId, input.endpointId);
      return {};
    }, options),

    ListDeliveries: unary('ListDeliveries', async (request: unknown): Promise<ListDeliveriesResponse> => {
      const input = parse(listDeliveriesSchema, request);
      const page = await listDeliveries(deps, {
        workspaceId: input.workspaceId,
        endpointId: input.endpointId,
        pageSize: input.pageSize === 0 ? defaultPageSize : input.pageSize,
        cursor: input.pageToken,
      });
      return { deliveries: page.deliveries.map(toDelivery), nextPageToken: page.nextCursor };
    }, options),

    RedeliverDelivery: unary('RedeliverDelivery', async (request: unknown): Promise<RedeliverDeliveryResponse> => {
      const input = parse(redeliverSchema, request);
      return { delivery: toDelivery(await redeliver(deps, input)) };
    }, options),

    UpdateEndpoint: unary('UpdateEndpoint', async (request: unknown): Promise<UpdateEndpointResponse> => {
      const input = parse(updateSchema, request);
      const endpoint = await updateEndpoint(deps, {
        workspaceId: input.workspaceId,
        endpointId: input.endpointId,
        url: input.url ?? undefined,
        events: input.events?.kinds,
        enabled: input.enabled ?? undefined,
      });
      return { endpoint: toEndpoint(endpoint) };
    }, options),

    RotateEndpointSecret: unary('RotateEndpointSecret', async (request: unknown): Promise<RotateEndpointSecretResponse> => {
      const input = parse(rotateSchema, request);
      const endpoint = await rotateSecret(deps, { ...input, overlapSeconds: input.overlapSeconds ?? undefined });
      return { endpoint: toEndpoint(endpoint) };
    }, options),

    SendTestEvent: unary('SendTestEvent', async (request: unknown): Promise<SendTestEventResponse> => {
      const input = parse(endpointRef, request);
      const delivery = await sendTestEvent(deps, input);
      return { eventId: delivery.eventId, delivery: toDelivery(delivery) };
    }, options),
  } satisfies grpc.UntypedServiceImplementation;

  return { name: serviceName, definition: proto.webhooks.v1.WebhooksService.service, implementation };
}
