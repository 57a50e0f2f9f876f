import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { GrpcClientMetrics } from '@tws/common';
import { connectAttachments } from '../clients/attachments.js';
import { connectTasks, type RevocationsApi } from '../clients/tasks.js';
import { connectWebhooks } from '../clients/webhooks.js';
import { ApiKeys } from '../domain/api-keys.js';
import { Members } from '../domain/members.js';
import { Labels } from '../domain/labels.js';
import { People } from '../domain/people.js';
import { Webhooks } from '../domain/webhooks.js';
import { TaskPages } from '../domain/task-page.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Who a person is: their workspaces, by verified email. */
    people: People;
    /** The API keys of the workspace settings, as the signed-in person. */
    apiKeys: ApiKeys;
    /** The webhooks of the workspace settings (webhooks.v1; the app decides who may). */
    webhooks: Webhooks;
    /** The task page (TaskPageService, names of statuses/sections/people, comments; attachments). */
    taskPages: TaskPages;
    /** The members of the workspace settings, as the signed-in person. */
    members: Members;
    /** The workspace's labels and the labels on its tasks, as the signed-in person. */
    labels: Labels;
    /** tasks.v1.RevocationService (a grant revoked at the authorization server, pushed to the gateways: plugins/oauth.ts). */
    tasksRevocations: RevocationsApi;
  }
}

export interface BackendsOptions {
  target: string;
  /** The webhooks service (WEBHOOKS_GRPC_TARGET). */
  webhooksTarget: string;
  deadlineMs: number;
  revokeDeadlineMs: number;
  /** The attachments service (ATTACHMENTS_GRPC_TARGET) and the API's public base URL of its download links. */
  attachmentsTarget: string;
  apiPublicBaseUrl: string;
  metrics: GrpcClientMetrics;
}

/** The gRPC clients of the tasks service (TasksService, SettingsService, TaskPageService), the webhooks service and the attachments service (GRPC_DEADLINE_MS), opened here and closed when the app closes. */
async function backendsPlugin(app: FastifyInstance, options: BackendsOptions): Promise<void> {
  const tasks = connectTasks(options.target, options.deadlineMs, options.metrics);
  app.decorate('people', new People(tasks.api));
  app.decorate('apiKeys', new ApiKeys(tasks.settings, options.revokeDeadlineMs));
  app.decorate('labels', new Labels(tasks.labels));
  app.decorate('tasksRevocations', tasks.revocations);
  app.decorate('members', new Members(tasks.settings, options.revokeDeadlineMs));
  const webhooks = connectWebhooks(options.webhooksTarget, options.deadlineMs, options.metrics);
  app.decorate('webhooks', new Webhooks(webhooks.api));
  const attachments = connectAttachments(options.attachmentsTarget, options.deadlineMs, options.metrics);
  app.decorate('taskPages', new TaskPages(tasks.taskPage, attachments.api, options.apiPublicBaseUrl));
  app.addHook('onClose', async () => {
    tasks.close();
    webhooks.close();
    attachments.close();
  });
}

export default fp(backendsPlugin, { name: 'backends' });
