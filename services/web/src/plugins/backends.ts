import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { GrpcClientMetrics } from '@tws/common';
import { connectTasks } from '../clients/tasks.js';
import { ApiKeys } from '../domain/api-keys.js';
import { Labels } from '../domain/labels.js';
import { People } from '../domain/people.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Who a person is: their workspaces, by verified email. */
    people: People;
    /** The API keys of the workspace settings, as the signed-in person. */
    apiKeys: ApiKeys;
    /** The workspace's labels and the labels on its tasks, as the signed-in person. */
    labels: Labels;
  }
}

export interface BackendsOptions {
  target: string;
  deadlineMs: number;
  revokeDeadlineMs: number;
  metrics: GrpcClientMetrics;
}

/** The gRPC clients of the tasks service (TasksService, SettingsService; GRPC_DEADLINE_MS), opened here and closed when the app closes. */
async function backendsPlugin(app: FastifyInstance, options: BackendsOptions): Promise<void> {
  const tasks = connectTasks(options.target, options.deadlineMs, options.metrics);
  app.decorate('people', new People(tasks.api));
  app.decorate('apiKeys', new ApiKeys(tasks.settings, options.revokeDeadlineMs));
  app.decorate('labels', new Labels(tasks.labels));
  app.addHook('onClose', async () => tasks.close());
}

export default fp(backendsPlugin, { name: 'backends' });
