import * as grpc from '@grpc/grpc-js';
import { grpcClientMetrics, grpcClientOptions, grpcHealthChecker, type ReadinessCheck } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import type { TasksServiceClient } from '@tws/proto-types/generated/tasks/v1/TasksService';
import type { AttachmentsServiceClient } from '@tws/proto-types/generated/attachments/v1/AttachmentsService';
import type { WebhooksServiceClient } from '@tws/proto-types/generated/webhooks/v1/WebhooksService';
import { connectAttachments } from './attachments.js';
import { connectWebhooks } from './webhooks.js';
import type { Registry } from 'prom-client';
import type { GatewayConfig } from '../config.js';

/** gRPC clients of the backend services, one channel each, shared by all requests. */
export interface Backends {
  tasks: TasksServiceClient;
  attachments: AttachmentsServiceClient;
  webhooks: WebhooksServiceClient;
  /** grpc.health.v1 check of each backend (reported by /readyz, not required by it). */
  health: ReadinessCheck[];
  close(): void;
}

export function connectBackends(config: GatewayConfig, registry: Registry): Backends {
  const metrics = grpcClientMetrics(registry);
  const tasksProto = loadTasksProto();
  const tasks = new tasksProto.tasks.v1.TasksService(
    config.TASKS_GRPC_TARGET,
    grpc.credentials.createInsecure(),
    grpcClientOptions('tasks.v1.TasksService', metrics),
  );
  const attachments = connectAttachments(
    config.ATTACHMENTS_GRPC_TARGET,
    grpcClientOptions('attachments.v1.AttachmentsService', metrics),
  );
  const webhooks = connectWebhooks(config.WEBHOOKS_GRPC_TARGET, grpcClientOptions('webhooks.v1.WebhooksService', metrics));
  const peers = {
    tasks: config.TASKS_GRPC_TARGET,
    attachments: config.ATTACHMENTS_GRPC_TARGET,
    webhooks: config.WEBHOOKS_GRPC_TARGET,
  };
  const healthCheckers = Object.entries(peers).map(([name, target]) => ({ name, checker: grpcHealthChecker(target) }));
  return {
    tasks,
    attachments,
    webhooks,
    health: healthCheckers.map(({ name, checker }) => ({ name: `${name} service`, check: () => checker.check() })),
    close() {
      tasks.close();
      attachments.close();
      webhooks.close();
      for (const { checker } of healthCheckers) checker.close();
    },
  };
}
