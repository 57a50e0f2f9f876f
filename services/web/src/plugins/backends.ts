import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { GrpcClientMetrics } from '@tws/common';
import { connectTasks } from '../clients/tasks.js';
import { People } from '../domain/people.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Who a person is: their workspaces, by verified email. */
    people: People;
  }
}

/** The gRPC channel to the tasks service (tasks.v1.TasksService, GRPC_DEADLINE_MS), opened here and closed when the app closes. */
async function backendsPlugin(app: FastifyInstance, options: { target: string; deadlineMs: number; metrics: GrpcClientMetrics }): Promise<void> {
  const tasks = connectTasks(options.target, options.deadlineMs, options.metrics);
  app.decorate('people', new People(tasks.api));
  app.addHook('onClose', async () => tasks.close());
}

export default fp(backendsPlugin, { name: 'backends' });
