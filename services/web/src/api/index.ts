import type { FastifyInstance } from 'fastify';
import { assetRoutes } from './assets.js';
import { authRoutes } from './auth.js';
import { connectedAppsRoutes } from './connected-apps.js';
import { oauthInteractionRoutes } from './oauth-interactions.js';
import { memberRoutes } from './members.js';
import { labelRoutes } from './labels.js';
import { pageRoutes } from './pages.js';
import { settingsRoutes } from './settings.js';
import { webhookRoutes } from './webhooks.js';
import { taskPageRoutes } from './task-page.js';

/** Every route of the web service (probes and /metrics are on OPS_PORT, see main.ts). */
export default async function api(app: FastifyInstance, options: { appUrl: string }): Promise<void> {
  await app.register(assetRoutes);
  await app.register(authRoutes, options);
  await app.register(pageRoutes);
  await app.register(settingsRoutes);
  await app.register(webhookRoutes);
  await app.register(taskPageRoutes);
  await app.register(memberRoutes);
  await app.register(labelRoutes);
  await app.register(oauthInteractionRoutes);
  await app.register(connectedAppsRoutes);
}
