import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkRegistration, webhooksGuestRefusal } from '../domain/webhooks.js';
import { deliveryLogPage, webhookPath, webhooksPage, webhooksPath } from './html/webhooks.js';
import { workspaceFor } from './settings.js';

/** Any text: a url id that is not one of the person's workspaces is a 404 like any unknown page; ids are checked by the domain (not a UUID: 404). */
const workspaceParams = z.object({ urlId: z.string().max(100) });
const endpointParams = workspaceParams.extend({ id: z.string().max(100) });
const deliveryParams = endpointParams.extend({ deliveryId: z.string().max(100) });
const listQuery = z.object({ notice: z.enum(['created', 'deleted']).optional() });
// The webhooks service's cursors are short (base64url of a UUID); bounded here like every query value.
const logQuery = z.object({ notice: z.enum(['redelivered']).optional(), page: z.string().max(200).optional() });
// BODY_LIMIT_BYTES bounds the text; the lengths are checked with a sentence at the field (checkRegistration).
const createBody = z.object({
  _csrf: z.string().max(200).optional(),
  url: z.string().default(''),
  secret: z.string().default(''),
  // One checkbox checked is a string, several an array.
  events: z
    .union([z.string().max(100), z.array(z.string().max(100)).max(10)])
    .optional()
    .transform((value) => (value === undefined ? [] : Array.isArray(value) ? value : [value])),
});
const postBody = z.object({ _csrf: z.string().max(200).optional() });

/**
 * The webhooks of the workspace settings: list and add, delete, the delivery log of one webhook and
 * redelivery. Owners and members manage every webhook of the workspace (as with an API key); a
 * guest gets the refusal and no data. Every POST is CSRF-checked (plugins/csrf.ts) and answers 303
 * (post/redirect/get), but a refused registration, which shows the form again with the sentence.
 */
export async function webhookRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const session = { session: true } as const;

  app.get('/:urlId/settings/webhooks', { schema: { params: workspaceParams, querystring: listQuery }, config: session }, async (request, reply) => {
    const { viewer, workspace } = await workspaceFor(app, request, request.params.urlId, webhooksGuestRefusal);
    const listed = await app.webhooks.list(workspace);
    return reply.page(webhooksPage(viewer, workspace, listed, { notice: request.query.notice }));
  });

  // The secret goes to the webhooks service and nowhere else: never logged, never put back in a page.
  app.post('/:urlId/settings/webhooks', { schema: { params: workspaceParams, body: createBody }, config: session }, async (request, reply) => {
    const { viewer, workspace } = await workspaceFor(app, request, request.params.urlId, webhooksGuestRefusal);
    const checked = checkRegistration(request.body);
    const refused = async (form: NonNullable<Parameters<typeof webhooksPage>[3]>['form']) =>
      reply.page(webhooksPage(viewer, workspace, await app.webhooks.list(workspace), { form }), 400);
    if (!checked.ok) return refused({ draft: checked.draft, error: checked.error });
    const created = await app.webhooks.create(workspace, checked.value);
    if (!created.ok) return refused({ draft: { url: checked.value.url, events: checked.value.events }, error: created.error });
    return reply.redirect(`${webhooksPath(workspace)}?notice=created`, 303);
  });

  app.post('/:urlId/settings/webhooks/:id/delete', { schema: { params: endpointParams, body: postBody }, config: session }, async (request, reply) => {
    const { workspace } = await workspaceFor(app, request, request.params.urlId, webhooksGuestRefusal);
    await app.webhooks.delete(workspace, request.params.id);
    return reply.redirect(`${webhooksPath(workspace)}?notice=deleted`, 303);
  });

  app.get('/:urlId/settings/webhooks/:id', { schema: { params: endpointParams, querystring: logQuery }, config: session }, async (request, reply) => {
    const { viewer, workspace } = await workspaceFor(app, request, request.params.urlId, webhooksGuestRefusal);
    const endpoint = await app.webhooks.get(workspace, request.params.id);
    const pageToken = request.query.page ?? '';
    const page = await app.webhooks.deliveries(workspace, endpoint.id, pageToken);
    return reply.page(deliveryLogPage(viewer, workspace, endpoint, page, { notice: request.query.notice, olderThanFirstPage: pageToken !== '' }));
  });

  app.post(
    '/:urlId/settings/webhooks/:id/deliveries/:deliveryId/redeliver',
    { schema: { params: deliveryParams, body: postBody }, config: session },
    async (request, reply) => {
      const { workspace } = await workspaceFor(app, request, request.params.urlId, webhooksGuestRefusal);
      await app.webhooks.redeliver(workspace, request.params.id, request.params.deliveryId);
      return reply.redirect(`${webhookPath(workspace, request.params.id)}?notice=redelivered`, 303);
    },
  );
}
