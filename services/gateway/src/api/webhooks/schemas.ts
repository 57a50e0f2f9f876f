import { z } from 'zod';
import type { Delivery__Output } from '@tws/proto-types/generated/webhooks/v1/Delivery';
import type { Endpoint__Output } from '@tws/proto-types/generated/webhooks/v1/Endpoint';
import { taskEventKinds, type TaskEventKind } from '@tws/contracts';
import { Timestamp } from '../schemas/common.js';

/** The kinds of the task-events.v1 contract (@tws/contracts) a webhook endpoint can subscribe to. */
export const EventKind = z
  .enum(taskEventKinds, { error: `must be one of ${taskEventKinds.join(', ')}` })
  .meta({ id: 'WebhookEventKind', description: 'A task event kind.' });

export const CreateWebhookBody = z.strictObject({
  url: z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(2048, { error: 'must be at most 2048 characters' })
    .meta({
      format: 'uri',
      description:
        'HTTPS address of the receiver. Refused (400) unless it uses https and its host resolves only to public addresses (no localhost, private, link-local, CGNAT, unique-local, multicast or reserved ranges, nor IPv4-mapped/NAT64/6to4 forms of them). Checked again before every delivery.',
      examples: ['https://hooks.example.com/task-workspace'],
    }),
  secret: z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(1024, { error: 'must be at most 1024 characters' })
    .meta({
      description:
        'Key of the HMAC-SHA256 signatures of every delivery, as its UTF-8 bytes: the contract header `X-Service-Signature` and the Standard Webhooks `webhook-signature` (with `webhook-id` and `webhook-timestamp`; never base64-decoded, even when it starts with `whsec_`). Write-only: never returned.',
      writeOnly: true,
    }),
  events: z
    .array(EventKind)
    .max(10, { error: 'must list at most 10 kinds' })
    .optional()
    .meta({ description: 'Kinds to receive. Omitted or `[]` subscribes to all three, and the response lists all three.' }),
});

/** What a delivery carries: a task event kind, or `ping` (POST /v1/webhooks/:id/test). */
export const DeliveryEvent = z
  .enum([...taskEventKinds, 'ping'])
  .meta({ id: 'WebhookDeliveryEvent', description: 'A task event kind, or `ping` for a test delivery.' });

export const CreatedWebhook = z
  .object({ id: z.string(), url: z.string(), events: z.array(EventKind) })
  .meta({ id: 'CreatedWebhook', description: 'The registered endpoint (the secret is never returned).' });

export const DisabledReason = z.enum(['manual', 'failing']).meta({
  id: 'WebhookDisabledReason',
  description: '`manual`: disabled with PATCH `{"enabled": false}`. `failing`: every attempt failed for the auto-disable window (3 days by default).',
});

export const Webhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(EventKind),
    createdAt: Timestamp,
    enabled: z.boolean().meta({ description: 'False: no new deliveries are made to it; its pending ones were cancelled. Re-enable with PATCH `{"enabled": true}`.' }),
    disabledAt: Timestamp.nullable().meta({ description: 'When it was disabled; null while enabled.' }),
    disabledReason: DisabledReason.nullable().meta({ description: 'Why it was disabled; null while enabled.' }),
    previousSecretExpiresAt: Timestamp.nullable().meta({
      description: 'After a secret rotation: until when the previous secret also signs `webhook-signature`; null otherwise.',
    }),
  })
  .meta({ id: 'Webhook', description: 'A registered endpoint (the secret is never returned).' });

const AttemptLog = z
  .object({
    attempt: z.number().int().min(1).max(5),
    attemptedAt: Timestamp,
    durationMs: z.number().int().min(0),
    outcome: z.enum(['succeeded', 'failed', 'blocked']).meta({
      description:
        '`succeeded`: 2xx within 10 s. `failed`: other status, time-out or connection error. `blocked`: no request was made because the host resolved to a disallowed address.',
    }),
    statusCode: z.number().int().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'WebhookAttempt' });

export const Delivery = z
  .object({
    id: z.string().meta({ description: 'Delivery id (one per event and endpoint; a redelivery gets a new one).' }),
    eventId: z.string().meta({ description: 'The event id (`evt_<uuid>`), sent as `X-Service-Delivery` on every attempt.' }),
    event: DeliveryEvent,
    status: z.enum(['pending', 'succeeded', 'failed', 'cancelled']).meta({
      description: '`pending`: an attempt is due or running; `failed`: permanently, after 5 attempts; `cancelled`: the endpoint was deleted.',
    }),
    createdAt: Timestamp,
    redeliveryOf: z.string().nullable().meta({ description: 'The delivery a manual redelivery repeats.' }),
    nextAttemptAt: Timestamp.nullable().meta({ description: 'When the next attempt is due (pending deliveries only).' }),
    attempts: z.array(AttemptLog).meta({ description: 'Oldest first.' }),
  })
  .meta({ id: 'WebhookDelivery' });

export const DeliveryPage = z
  .object({
    deliveries: z.array(Delivery).meta({ description: 'Newest first.' }),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  })
  .meta({ id: 'WebhookDeliveryPage' });

export const DeliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Page size, 1..100 (default 20).' }),
  cursor: z.string().max(100).optional().meta({ description: '`nextCursor` of the previous page.' }),
});

const eventKindOf = (value: string): TaskEventKind => {
  const kind = taskEventKinds.find((candidate) => candidate === value);
  if (!kind) throw new Error(`unknown event kind from the webhooks service: ${value}`);
  return kind;
};

export const toCreatedWebhook = (endpoint: Endpoint__Output): z.infer<typeof CreatedWebhook> => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events.map(eventKindOf),
});

const reasonOf: Record<string, z.infer<typeof DisabledReason>> = { DISABLED_REASON_MANUAL: 'manual', DISABLED_REASON_FAILING: 'failing' };

export const toWebhook = (endpoint: Endpoint__Output): z.infer<typeof Webhook> => ({
  ...toCreatedWebhook(endpoint),
  createdAt: endpoint.createdAt,
  enabled: endpoint.enabled,
  disabledAt: endpoint.disabledAt ?? null,
  disabledReason: reasonOf[String(endpoint.disabledReason)] ?? null,
  previousSecretExpiresAt: endpoint.previousSecretExpiresAt ?? null,
});

const deliveryEventOf = (value: string): z.infer<typeof DeliveryEvent> => (value === 'ping' ? 'ping' : eventKindOf(value));

const statusOf: Record<string, 'pending' | 'succeeded' | 'failed' | 'cancelled'> = {
  DELIVERY_STATE_PENDING: 'pending',
  DELIVERY_STATE_SUCCEEDED: 'succeeded',
  DELIVERY_STATE_FAILED: 'failed',
  DELIVERY_STATE_CANCELLED: 'cancelled',
};
const outcomeOf: Record<string, 'succeeded' | 'failed' | 'blocked'> = {
  ATTEMPT_OUTCOME_SUCCEEDED: 'succeeded',
  ATTEMPT_OUTCOME_FAILED: 'failed',
  ATTEMPT_OUTCOME_BLOCKED: 'blocked',
};

export const toDelivery = (delivery: Delivery__Output): z.infer<typeof Delivery> => {
  const status = statusOf[String(delivery.state)];
  if (!status) throw new Error(`unknown delivery state from the webhooks service: ${delivery.state}`);
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    event: deliveryEventOf(delivery.event),
    status,
    createdAt: delivery.createdAt,
    redeliveryOf: delivery.redeliveryOf ?? null,
    nextAttemptAt: delivery.nextAttemptAt ?? null,
    attempts: delivery.attempts.map((attempt) => {
      const outcome = outcomeOf[String(attempt.outcome)];
      if (!outcome) throw new Error(`unknown attempt outcome from the webhooks service: ${attempt.outcome}`);
      return {
        attempt: attempt.attempt,
        attemptedAt: attempt.startedAt,
        durationMs: attempt.durationMs,
        outcome,
        statusCode: attempt.statusCode ?? null,
        error: attempt.error ?? null,
      };
    }),
  };
};
