import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { GrpcClientMetrics } from '@tws/common';
import { connectTasks } from '../clients/tasks.js';
import { connectWebhooks } from '../clients/webhooks.js';
import { ApiKeys } from '../domain/api-keys.js';
import { People } from '../domain/people.js';
import { Webhooks } from '../domain/webhooks.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Who a person is: their workspaces, by verified email. */
    people: People;
    /** The API keys of the workspace settings, as the signed-in person. */
    apiKeys: ApiKeys;
    /** The webhooks of the workspace settings (webhooks.v1; the app decides who may). */
    webhooks: Webhooks;
  }
}

export interface BackendsOptions {
  target: string;
  /** The webhooks service (WEBHOOKS_GRPC_TARGET). */
  webhooksTarget: string;
  deadlineMs: number;
  revokeDeadlineMs: number;
  metrics: GrpcClientMetrics;
}

/** The gRPC clients of the tasks service (TasksService, SettingsService) and the webhooks service (GRPC_DEADLINE_MS), opened here and closed when the app closes. */
async function backendsPlugin(app: FastifyInstance, options: BackendsOptions): Promise<void> {
  const tasks = connectTasks(options.target, options.deadlineMs, options.metrics);
  app.decorate('people', new People(tasks.api));
  app.decorate('apiKeys', new ApiKeys(tasks.settings, options.revokeDeadlineMs));
  const webhooks = connectWebhooks(options.webhooksTarget, options.deadlineMs, options.metrics);
  app.decorate('webhooks', new Webhooks(webhooks.api));
  app.addHook('onClose', async () => {
    tasks.close();
    webhooks.close();
  });
}

export default fp(backendsPlugin, { name: 'backends' });
