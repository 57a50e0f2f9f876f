import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { assertPathId, errorResponses, NoContent, PathId } from '../schemas/common.js';
import webhookAdminRoutes from './admin.js';
import { apiKeyOnlyDescription, config, security, WebhookParams } from './route-config.js';
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeliveriesQuery,
  Delivery,
  DeliveryPage,
  toCreatedWebhook,
  toDelivery,
  toWebhook,
  Webhook,
} from './schemas.js';

const DeliveryParams = z.object({ id: PathId, deliveryId: PathId });

/**
 * Webhook management (contract section 4 "Webhooks") through `app.webhooksApi` (plugins/backends.ts).
 * Every route declares `auth: { apiKeyOnly }`: the auth plugin refuses Bearer principals. The
 * workspace is always the API key's.
 */
const webhookRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/webhooks',
    {
      config,
      schema: {
        tags: ['Webhooks'],
        security,
        operationId: 'createWebhook',
        summary: 'Register a webhook endpoint',
        description: `${apiKeyOnlyDescription} 400 when the URL is not https, does not resolve ("host does not resolve"), or resolves to localhost or a private/reserved address.`,
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, ...errorResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { endpoint } = await app.webhooksApi.CreateEndpoint({
        workspaceId: request.principal.workspaceId,
        url: request.body.url,
        secret: request.body.secret,
        events: request.body.events ?? [],
      });
      if (!endpoint) throw new Error('CreateEndpoint answered without an endpoint');
      return reply.code(201).send(toCreatedWebhook(endpoint));
    },
  );

  app.get(
    '/webhooks',
    {
      config,
      schema: {
        tags: ['Webhooks'],
        security,
        operationId: 'listWebhooks',
        summary: 'Registered webhook endpoints, oldest first (secrets are never included)',
        description: apiKeyOnlyDescription,
        response: { 200: z.array(Webhook), ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => {
      const { endpoints } = await app.webhooksApi.ListEndpoints({ workspaceId: request.principal.workspaceId });
      return endpoints.map(toWebhook);
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      config,
      schema: {
        tags: ['Webhooks'],
        security,
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint; its pending retries stop',
        description: apiKeyOnlyDescription,
        params: WebhookParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      assertPathId(request.params.id, 'webhook');
      await app.webhooksApi.DeleteEndpoint({ workspaceId: request.principal.workspaceId, endpointId: request.params.id });
      return reply.code(204).send();
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      config,
      schema: {
        tags: ['Webhooks'],
        security,
        operationId: 'listWebhookDeliveries',
        summary: 'Delivery log of an endpoint: recent deliveries with every attempt, newest first',
        description: `${apiKeyOnlyDescription} Paginated: pass \`nextCursor\` as \`cursor\` for older deliveries.`,
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryPage, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      assertPathId(request.params.id, 'webhook');
      const page = await app.webhooksApi.ListDeliveries({
        workspaceId: request.principal.workspaceId,
        endpointId: request.params.id,
        pageSize: request.query.limit,
        pageToken: request.query.cursor ?? '',
      });
      return { deliveries: page.deliveries.map(toDelivery), nextCursor: page.nextPageToken === '' ? null : page.nextPageToken };
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/redeliver',
    {
      config,
      schema: {
        tags: ['Webhooks'],
        security,
        operationId: 'redeliverWebhookDelivery',
        summary: 'Send a delivery again: a new attempt chain (up to 5 attempts) with the same event id',
        description: `${apiKeyOnlyDescription} Attempt 1 is made at once; the new delivery appears first in the delivery log.`,
        params: DeliveryParams,
        response: { 202: Delivery.describe('The new delivery (pending)'), ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      assertPathId(request.params.id, 'webhook');
      assertPathId(request.params.deliveryId, 'delivery');
      const { delivery } = await app.webhooksApi.RedeliverDelivery({
        workspaceId: request.principal.workspaceId,
        endpointId: request.params.id,
        deliveryId: request.params.deliveryId,
      });
      if (!delivery) throw new Error('RedeliverDelivery answered without a delivery');
      return reply.code(202).send(toDelivery(delivery));
    },
  );

  // PATCH, secret rotation and the test ping (issue #18).
  await app.register(webhookAdminRoutes);
};

export default webhookRoutes;
