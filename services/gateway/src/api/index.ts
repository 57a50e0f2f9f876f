import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import attachmentContentRoute from './attachments/content.js';
import attachmentRoutes, { type AttachmentRoutesOptions } from './attachments/index.js';
import auditRoutes from './audit/index.js';
import commentRoutes from './comments/index.js';
import projectRoutes from './projects/index.js';
import sectionRoutes from './sections/index.js';
import taskRoutes from './tasks/index.js';
import usageRoutes from './usage/index.js';
import webhookRoutes from './webhooks/index.js';
import workspaceRoutes from './workspace/index.js';

export type ApiOptions = AttachmentRoutesOptions;

/**
 * The public API, registered with prefix /v1: every resource's routes. Each route declares who may
 * call it (`config.auth`, applied by plugins/auth.ts, which also rate-limits the caller's credential);
 * routes read `request.principal`. A route here without that declaration is a start-up error, so no
 * route is public by omission.
 */
const api: FastifyPluginAsyncZod<ApiOptions> = async (app, options) => {
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === undefined) throw new Error(`${String(route.method)} ${route.url}: API routes declare config.auth`);
  });
  await app.register(workspaceRoutes);
  await app.register(usageRoutes);
  await app.register(projectRoutes);
  await app.register(sectionRoutes);
  await app.register(taskRoutes, { publicBaseUrl: options.publicBaseUrl });
  await app.register(commentRoutes);
  await app.register(attachmentRoutes, { publicBaseUrl: options.publicBaseUrl });
  await app.register(webhookRoutes);
  await app.register(attachmentContentRoute);
  await app.register(auditRoutes, { publicBaseUrl: options.publicBaseUrl });
};

export default api;
