import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { assertPathId, errorResponses } from '../schemas/common.js';
import { apiKeyOnlyDescription, config, security, WebhookParams } from './route-config.js';
import { CreateWebhookBody, EventKind, toWebhook, Webhook } from './schemas.js';

/** Longest overlap of a secret rotation (7 days) and the default (24 hours). */
export const maxOverlapSeconds = 604_800;
export const defaultOverlapSeconds = 86_400;

export const UpdateWebhookBody = z
  .strictObject({
    url: CreateWebhookBody.shape.url.optional(),
    events: z
      .array(EventKind)
      .min(1, { error: 'must not be empty' })
      .max(10, { error: 'must list at most 10 kinds' })
      .optional()
      .meta({ description: 'Kinds to receive from now on (a non-empty subset); replaces the current list.' }),
    enabled: z.boolean().optional().meta({
      description: '`false` disables the endpoint (no new deliveries; pending ones are cancelled); `true` re-enables it and clears `disabledAt` and `disabledReason`.',
    }),
  })
  .refine((body) => body.url !== undefined || body.events !== undefined || body.enabled !== undefined, {
    error: 'give at least one of url, events, enabled',
  })
  .meta({ id: 'UpdateWebhook', minProperties: 1 });

export const RotateSecretBody = z
  .strictObject({
    secret: CreateWebhookBody.shape.secret.meta({ description: 'The new secret. Write-only: never returned.', writeOnly: true }),
    overlapSeconds: z
      .number()
      .int()
      .min(0)
      .max(maxOverlapSeconds, { error: `must be at most ${maxOverlapSeconds} (7 days)` })
      .optional()
      .meta({
        description: `How long the previous secret still signs \`webhook-signature\` beside the new one (default ${defaultOverlapSeconds}: 24 hours; 0: not at all). It is deleted afterwards.`,
      }),
  })
  .meta({ id: 'RotateWebhookSecret' });

export const TestEventAccepted = z
  .object({
    id: z.string().meta({ description: 'The ping event id (`evt_<uuid>`): its `webhook-id` and `X-Service-Delivery`.' }),
    deliveryId: z.string().meta({ description: 'The delivery in the endpoint\'s delivery log.' }),
  })
  .meta({ id: 'WebhookTestEvent' });

/**
 * Webhook administration beyond the contract (issue #18): PATCH, secret rotation and the test ping,
 * through `app.webhooksApi` like the contract's routes (API key only, the key's workspace).
 */
const webhookAdminRoutes: FastifyPluginAsyncZod = async (app) => {
  app.patch(
    '/webhooks/:id',
    {
      config,
      schema: {
        tags: ['Webhooks'],
        security,
        operationId: 'updateWebhook',
        summary: 'Change an endpoint: url, events, enabled',
        description: `${apiKeyOnlyDescription} A new url passes the same checks as at registration (400 when not https, not resolving, or resolving to a private/reserved address).`,
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: Webhook, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request) => {
      assertPathId(request.params.id, 'webhook');
      const { url, events, enabled } = request.body;
      const { endpoint } = await app.webhooksApi.UpdateEndpoint({
        workspaceId: request.principal.workspaceId,
        endpointId: request.params.id,
        ...(url !== undefined ? { url } : {}),
        ...(events !== undefined ? { events: { kinds: events } } : {}),
        ...(enabled !== undefined ? { enabled } : {}),
      });
      if (!endpoint) throw new Error('UpdateEndpoint answered without an endpoint');
      return toWebhook(endpoint);
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config,
      schema: {
        tags: ['Webhooks'],
        security,
        operationId: 'rotateWebhookSecret',
        summary: 'Replace the signing secret, with an overlap during which both secrets sign',
        description: `${apiKeyOnlyDescription} From now on \`X-Service-Signature\` is signed with the new secret only; during the overlap \`webhook-signature\` carries two signatures (\`v1,<new> v1,<previous>\`). After it the previous secret is deleted.`,
        params: WebhookParams,
        body: RotateSecretBody,
        response: { 200: Webhook, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request) => {
      assertPathId(request.params.id, 'webhook');
      const { endpoint } = await app.webhooksApi.RotateEndpointSecret({
        workspaceId: request.principal.workspaceId,
        endpointId: request.params.id,
        secret: request.body.secret,
        ...(request.body.overlapSeconds !== undefined ? { overlapSeconds: request.body.overlapSeconds } : {}),
      });
      if (!endpoint) throw new Error('RotateEndpointSecret answered without an endpoint');
      return toWebhook(endpoint);
    },
  );

  app.post(
    '/webhooks/:id/test',
    {
      config,
      schema: {
        tags: ['Webhooks'],
        security,
        operationId: 'testWebhook',
        summary: 'Send a signed `ping` event to this endpoint',
        description: `${apiKeyOnlyDescription} Delivered to this endpoint only (whatever its \`events\`, also while disabled) through the normal pipeline: signed, retried on the normal schedule, in the delivery log with \`event: "ping"\`. Payload: \`{"id": "evt_…", "event": "ping", "createdAt": "…", "data": {"webhookId": "…"}}\`, header \`X-Service-Event: ping\`.`,
        params: WebhookParams,
        response: { 202: TestEventAccepted, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      assertPathId(request.params.id, 'webhook');
      const { eventId, delivery } = await app.webhooksApi.SendTestEvent({ workspaceId: request.principal.workspaceId, endpointId: request.params.id });
      if (!delivery) throw new Error('SendTestEvent answered without a delivery');
      return reply.code(202).send({ id: eventId, deliveryId: delivery.id });
    },
  );
};

export default webhookAdminRoutes;
