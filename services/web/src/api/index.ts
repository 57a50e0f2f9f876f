import type { FastifyInstance } from 'fastify';
import { assetRoutes } from './assets.js';
import { authRoutes } from './auth.js';
import { labelRoutes } from './labels.js';
import { pageRoutes } from './pages.js';
import { settingsRoutes } from './settings.js';

/** Every route of the web service (probes and /metrics are on OPS_PORT, see main.ts). */
export default async function api(app: FastifyInstance, options: { appUrl: string }): Promise<void> {
  await app.register(assetRoutes);
  await app.register(authRoutes, options);
  await app.register(pageRoutes);
  await app.register(settingsRoutes);
  await app.register(labelRoutes);
}
