import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import attachmentRoutes, { type AttachmentRoutesOptions } from './attachments/index.js';
import commentRoutes from './comments/index.js';
import projectRoutes from './projects/index.js';
import sectionRoutes from './sections/index.js';
import taskRoutes from './tasks/index.js';
import webhookRoutes from './webhooks/index.js';
import workspaceRoutes from './workspace/index.js';

/**
 * The public API, registered with prefix /v1. Every route in this subtree is authenticated,
 * rate-limited and authorized by the auth plugin's hook; routes read `request.principal`.
 * Attachments and webhooks routes are registered here too when they exist (webhooks: API key only,
 * enforced by the hook for /v1/webhooks*, see `requireApiKey`).
 */
const v1Routes: FastifyPluginAsyncZod<AttachmentRoutesOptions> = async (app, options) => {
  app.addHook('onRequest', app.authenticate);
  await app.register(workspaceRoutes);
  await app.register(projectRoutes);
  await app.register(sectionRoutes);
  await app.register(taskRoutes);
  await app.register(commentRoutes);
  await app.register(attachmentRoutes, { publicBaseUrl: options.publicBaseUrl });
  await app.register(webhookRoutes);
};

export default v1Routes;
