import { randomUUID } from 'node:crypto';
import { currentRequestId, DomainError, notFound, type Logger } from '@tws/common';
import { redeliveryTopic, scheduledAttemptMessage } from '@tws/contracts';
import type { DeliveryLogEntry, DeliveryStore } from '../store/deliveries.js';
import type { EndpointStore } from '../store/endpoints.js';
import type { HandoffProducer } from '../store/handoff-producer.js';
import { requireEndpoint } from './endpoints.js';

export interface RedeliveryDeps {
  endpoints: EndpointStore;
  deliveries: DeliveryStore;
  producer: HandoffProducer;
  logger: Logger;
}

/**
 * Repeats a delivery: a new delivery (new id, `redeliveryOf` the one repeated, same event and body)
 * with its own chain of attempts, started through the `webhooks.redeliver` topic. When Kafka does
 * not take the message, the new delivery is cancelled and the caller told to try again (UNAVAILABLE).
 */
export async function redeliver(
  deps: RedeliveryDeps,
  input: { workspaceId: string; endpointId: string; deliveryId: string },
): Promise<DeliveryLogEntry> {
  await requireEndpoint(deps.endpoints, input.workspaceId, input.endpointId);
  const id = randomUUID();
  const created = await deps.deliveries.createRedelivery({ id, endpointId: input.endpointId, deliveryId: input.deliveryId });
  if (!created) throw notFound('delivery not found');
  const now = new Date();
  try {
    await deps.producer.send(
      redeliveryTopic,
      scheduledAttemptMessage(
        { deliveryId: id, eventId: created.eventId, endpointId: input.endpointId, attempt: 1, notBefore: now.toISOString() },
        // The redelivery's attempt is logged under the id of the request that asked for it.
        { redeliveryOf: input.deliveryId, requestId: currentRequestId() },
      ),
    );
  } catch (error) {
    await deps.deliveries.cancel([id]).catch(() => undefined);
    deps.logger.error({ err: error }, 'cannot queue a redelivery');
    throw new DomainError('unavailable', 'cannot queue the redelivery now; try again');
  }
  return created;
}
