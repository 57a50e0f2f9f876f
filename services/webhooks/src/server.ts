import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type * as grpc from '@grpc/grpc-js';
import { DomainError, grpcServerMetrics, invalid, notFound, unary, type GrpcServiceRegistration, type Logger } from '@tws/common';
import { loadWebhooksProto } from '@tws/proto-types';
import { redeliveryTopic, scheduledAttemptMessage, taskEventKinds as eventTypes } from '@tws/contracts';
import type { Attempt } from '@tws/proto-types/generated/webhooks/v1/Attempt';
import type { CreateEndpointResponse } from '@tws/proto-types/generated/webhooks/v1/CreateEndpointResponse';
import type { DeleteEndpointResponse } from '@tws/proto-types/generated/webhooks/v1/DeleteEndpointResponse';
import type { Delivery } from '@tws/proto-types/generated/webhooks/v1/Delivery';
import type { Endpoint } from '@tws/proto-types/generated/webhooks/v1/Endpoint';
import type { ListDeliveriesResponse } from '@tws/proto-types/generated/webhooks/v1/ListDeliveriesResponse';
import type { ListEndpointsResponse } from '@tws/proto-types/generated/webhooks/v1/ListEndpointsResponse';
import type { RedeliverDeliveryResponse } from '@tws/proto-types/generated/webhooks/v1/RedeliverDeliveryResponse';
import type { Registry } from 'prom-client';
import type { DeliveryLogEntry, DeliveryStore } from './db/deliveries.js';
import type { EndpointRecord, EndpointStore } from './db/endpoints.js';
import type { HandoffProducer } from './delivery/handoff-producer.js';
import type { WebhookMetrics } from './metrics.js';
import type { HostVetter } from './net/host-vetting.js';
import type { SecretBox } from './signing/secret-box.js';

export interface WebhooksServiceDeps {
  endpoints: EndpointStore;
  deliveries: DeliveryStore;
  vetter: HostVetter;
  secrets: SecretBox;
  producer: HandoffProducer;
  metrics: WebhookMetrics;
  registry: Registry;
  logger: Logger;
  /** Told about every endpoint this replica deletes. */
  onDeleted?: (endpointId: string) => void;
}

const serviceName = 'webhooks.v1.WebhooksService';

/** gRPC input is checked like any other edge: ids are UUIDs, kinds are the contract's, sizes bounded. */
const workspaceId = z.string().min(1, 'workspace_id is required').max(200);
const uuid = (field: string) => z.uuid(`${field} must be a UUID`);

const createSchema = z.object({
  workspaceId,
  url: z.string().min(1, 'url is required').max(2048, 'url is too long'),
  secret: z.string().min(1, 'secret is required').max(1024, 'secret is too long'),
  events: z.array(z.enum(eventTypes, { error: () => `events must be a subset of ${eventTypes.join(', ')}` })).max(3 * 10),
});
const listSchema = z.object({ workspaceId });
const endpointRef = z.object({ workspaceId, endpointId: uuid('endpoint id') });
const listDeliveriesSchema = endpointRef.extend({
  pageSize: z.number().int().min(0).max(100, 'page size must be at most 100'),
  pageToken: z.string().max(100),
});
const redeliverSchema = endpointRef.extend({ deliveryId: uuid('delivery id') });

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw invalid(result.error.issues[0]?.message ?? 'invalid request');
}

const toEndpoint = (record: EndpointRecord): Endpoint => ({
  id: record.id,
  url: record.url,
  events: record.events,
  createdAt: record.createdAt.toISOString(),
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

const encodeToken = (deliveryId: string): string => Buffer.from(deliveryId, 'utf8').toString('base64url');
function decodeToken(token: string): string | undefined {
  if (token === '') return undefined;
  const id = Buffer.from(token, 'base64url').toString('utf8');
  if (!z.uuid().safeParse(id).success) throw invalid('cursor is invalid');
  return id;
}

/** The WebhooksService implementation (tests build it without a process around it). */
export function webhooksService(deps: WebhooksServiceDeps): GrpcServiceRegistration {
  const proto = loadWebhooksProto();
  const options = { service: serviceName, logger: deps.logger, metrics: grpcServerMetrics(deps.registry) };

  const requireEndpoint = async (workspace: string, endpointId: string): Promise<EndpointRecord> => {
    const endpoint = await deps.endpoints.get(workspace, endpointId);
    if (!endpoint) throw notFound('webhook not found');
    return endpoint;
  };

  const implementation = {
    CreateEndpoint: unary('CreateEndpoint', async (request: unknown): Promise<CreateEndpointResponse> => {
      const input = parse(createSchema, request);
      const vetting = await deps.vetter.vet(input.url);
      if (!vetting.ok) {
        if (vetting.kind === 'blocked') {
          deps.metrics.ssrfBlocked.inc({ stage: 'registration' });
          // The resolved address goes to the service log only, never to the caller.
          deps.logger.warn({ workspaceId: input.workspaceId, detail: vetting.detail }, 'webhook registration refused by the SSRF guard');
        }
        throw invalid(vetting.kind === 'dns-error' || vetting.kind === 'unresolvable' ? 'host does not resolve' : vetting.reason);
      }
      const requested = new Set(input.events);
      const events = requested.size === 0 ? [...eventTypes] : eventTypes.filter((type) => requested.has(type));
      const id = randomUUID();
      const endpoint = await deps.endpoints.create({
        id,
        workspaceId: input.workspaceId,
        // The URL as the WHATWG parser serialises it: what every attempt will call.
        url: vetting.target.url.href,
        events,
        secretCiphertext: deps.secrets.seal(input.secret, id),
      });
      deps.logger.info({ endpointId: id, workspaceId: input.workspaceId, host: vetting.target.host, events }, 'webhook endpoint registered');
      return { endpoint: toEndpoint(endpoint) };
    }, options),

    ListEndpoints: unary('ListEndpoints', async (request: unknown): Promise<ListEndpointsResponse> => {
      const input = parse(listSchema, request);
      return { endpoints: (await deps.endpoints.list(input.workspaceId)).map(toEndpoint) };
    }, options),

    DeleteEndpoint: unary('DeleteEndpoint', async (request: unknown): Promise<DeleteEndpointResponse> => {
      const input = parse(endpointRef, request);
      if (!(await deps.endpoints.delete(input.workspaceId, input.endpointId))) throw notFound('webhook not found');
      // This replica stops at once; the others within their next poll (DeletedEndpoints).
      deps.onDeleted?.(input.endpointId);
      deps.logger.info({ endpointId: input.endpointId, workspaceId: input.workspaceId }, 'webhook endpoint deleted');
      return {};
    }, options),

    ListDeliveries: unary('ListDeliveries', async (request: unknown): Promise<ListDeliveriesResponse> => {
      const input = parse(listDeliveriesSchema, request);
      await requireEndpoint(input.workspaceId, input.endpointId);
      const pageSize = input.pageSize === 0 ? 20 : input.pageSize;
      const after = decodeToken(input.pageToken);
      const entries = await deps.deliveries.listForEndpoint(input.endpointId, pageSize + 1, after);
      const page = entries.slice(0, pageSize);
      const last = page[page.length - 1];
      return {
        deliveries: page.map(toDelivery),
        nextPageToken: entries.length > pageSize && last ? encodeToken(last.id) : '',
      };
    }, options),

    RedeliverDelivery: unary('RedeliverDelivery', async (request: unknown): Promise<RedeliverDeliveryResponse> => {
      const input = parse(redeliverSchema, request);
      await requireEndpoint(input.workspaceId, input.endpointId);
      const id = randomUUID();
      const created = await deps.deliveries.createRedelivery({ id, endpointId: input.endpointId, deliveryId: input.deliveryId });
      if (!created) throw notFound('delivery not found');
      const now = new Date();
      try {
        await deps.producer.send(
          redeliveryTopic,
          scheduledAttemptMessage(
            { deliveryId: id, eventId: created.eventId, endpointId: input.endpointId, attempt: 1, notBefore: now.toISOString() },
            { redeliveryOf: input.deliveryId },
          ),
        );
      } catch (error) {
        await deps.deliveries.cancel([id]).catch(() => undefined);
        deps.logger.error({ err: error }, 'cannot queue a redelivery');
        throw new DomainError('unavailable', 'cannot queue the redelivery now; try again');
      }
      return { delivery: toDelivery(created) };
    }, options),
  } satisfies grpc.UntypedServiceImplementation;

  return { name: serviceName, definition: proto.webhooks.v1.WebhooksService.service, implementation };
}
