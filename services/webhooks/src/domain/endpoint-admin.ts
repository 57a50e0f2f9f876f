import { randomUUID } from 'node:crypto';
import { currentRequestId, DomainError, invalid, notFound } from '@tws/common';
import { pingEventSchema, redeliveryTopic, scheduledAttemptMessage, type TaskEventKind } from '@tws/contracts';
import type { DeliveryLogEntry, DeliveryStore } from '../store/deliveries.js';
import type { EndpointRecord } from '../store/endpoints.js';
import type { HandoffProducer } from '../store/handoff-producer.js';
import { requireEndpoint, subscribedKinds, vetUrl, type EndpointDeps } from './endpoints.js';

/** Overlap of a secret rotation when none is given: 24 hours. */
export const defaultOverlapSeconds = 86_400;
/** Longest overlap: 7 days. */
export const maxOverlapSeconds = 7 * 86_400;
/** The event kind of the test delivery. */
export const pingEvent = 'ping';

export interface EndpointUpdate {
  workspaceId: string;
  endpointId: string;
  url?: string | undefined;
  /** Non-empty when given (an empty list is refused, not read as "all"). */
  events?: readonly TaskEventKind[] | undefined;
  enabled?: boolean | undefined;
}

export type AdminDeps = EndpointDeps & { deliveries: DeliveryStore; producer: HandoffProducer };

/** The overlap of a rotation: the default when absent, else 0..7 days. */
export function overlapSecondsOf(requested: number | undefined): number {
  if (requested === undefined) return defaultOverlapSeconds;
  if (!Number.isInteger(requested) || requested < 0 || requested > maxOverlapSeconds) {
    throw invalid(`overlapSeconds must be an integer from 0 to ${maxOverlapSeconds}`);
  }
  return requested;
}

/** The ping's payload (`pingEventSchema` of @tws/contracts, as documented under `webhooks` in the OpenAPI document). */
export function pingPayload(eventId: string, webhookId: string, at: Date): Buffer {
  const ping = pingEventSchema.parse({ id: eventId, event: pingEvent, createdAt: at.toISOString(), data: { webhookId } });
  return Buffer.from(JSON.stringify(ping), 'utf8');
}

/**
 * PATCH: at least one change; a new url passes the same SSRF guard as a registration (and is stored
 * as the WHATWG parser serialises it); events are a non-empty subset; `enabled` toggles the disabled
 * state (disabling cancels pending deliveries, enabling clears `disabledAt`/`disabledReason`).
 */
export async function updateEndpoint(deps: EndpointDeps, input: EndpointUpdate): Promise<EndpointRecord> {
  if (input.url === undefined && input.events === undefined && input.enabled === undefined) {
    throw invalid('give at least one of url, events, enabled');
  }
  if (input.events !== undefined && input.events.length === 0) throw invalid('events must not be empty');
  await requireEndpoint(deps.endpoints, input.workspaceId, input.endpointId);
  const url = input.url === undefined ? undefined : (await vetUrl(deps, input.workspaceId, input.url)).target.url.href;
  const updated = await deps.endpoints.update(input.workspaceId, input.endpointId, {
    url,
    events: input.events === undefined ? undefined : subscribedKinds(input.events),
    enabled: input.enabled,
  });
  if (!updated) throw notFound('webhook not found');
  deps.logger.info(
    { endpointId: updated.id, workspaceId: input.workspaceId, changed: { url: url !== undefined, events: updated.events, enabled: input.enabled } },
    'webhook endpoint updated',
  );
  return updated;
}

/**
 * Replaces the endpoint's secret. The previous one keeps signing `webhook-signature` (beside the new
 * one) for the overlap, then is deleted; `X-Service-Signature` uses the new secret at once.
 */
export async function rotateSecret(
  deps: EndpointDeps,
  input: { workspaceId: string; endpointId: string; secret: string; overlapSeconds?: number | undefined },
): Promise<EndpointRecord> {
  const overlap = overlapSecondsOf(input.overlapSeconds);
  await requireEndpoint(deps.endpoints, input.workspaceId, input.endpointId);
  const sealed = deps.secrets.seal(input.secret, input.endpointId);
  const rotated = await deps.endpoints.rotateSecret(input.workspaceId, input.endpointId, sealed, overlap);
  if (!rotated) throw notFound('webhook not found');
  deps.logger.info({ endpointId: rotated.id, workspaceId: input.workspaceId, overlapSeconds: overlap }, 'webhook secret rotated');
  return rotated;
}

/**
 * The test ping: a new `ping` event for this endpoint only (whatever its events filter, and also when
 * it is disabled: checking a receiver before re-enabling it is what the ping is for), delivered
 * through the redelivery topic into the normal pipeline: signed, retried on the normal schedule,
 * logged. When Kafka does not take it, the delivery is cancelled and UNAVAILABLE returned.
 */
export async function sendTestEvent(deps: AdminDeps, input: { workspaceId: string; endpointId: string }): Promise<DeliveryLogEntry> {
  await requireEndpoint(deps.endpoints, input.workspaceId, input.endpointId);
  const eventId = `evt_${randomUUID()}`;
  const deliveryId = randomUUID();
  const now = new Date();
  const created = await deps.deliveries.createTestDelivery({
    id: deliveryId,
    endpointId: input.endpointId,
    event: { id: eventId, workspaceId: input.workspaceId, type: pingEvent, taskId: input.endpointId, payload: pingPayload(eventId, input.endpointId, now) },
  });
  if (!created) throw new Error('the test delivery was not created');
  try {
    await deps.producer.send(
      redeliveryTopic,
      scheduledAttemptMessage(
        { deliveryId, eventId, endpointId: input.endpointId, attempt: 1, notBefore: now.toISOString() },
        { eventType: pingEvent, workspaceId: input.workspaceId, requestId: currentRequestId() },
      ),
    );
  } catch (error) {
    await deps.deliveries.cancel([deliveryId]).catch(() => undefined);
    deps.logger.error({ err: error, endpointId: input.endpointId }, 'cannot queue a test ping');
    throw new DomainError('unavailable', 'cannot queue the test event now; try again');
  }
  deps.logger.info({ endpointId: input.endpointId, workspaceId: input.workspaceId, eventId }, 'webhook test ping queued');
  return created;
}
