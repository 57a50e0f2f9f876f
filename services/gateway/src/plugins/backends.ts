import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Counter } from 'prom-client';
import type { GrpcClientMetrics, ReadinessCheck } from '@tws/common';
import {
  connectBackends,
  type AttachmentsApi,
  type AuditApi,
  type IdempotencyApi,
  type RateLimitsApi,
  type RevocationsApi,
  type TasksApi,
  type WebhooksApi,
} from '../clients/backends.js';
import type { RevocationCall } from '../clients/revocation-stream.js';
import { TaskListReader } from '../clients/task-list-reader.js';
import { TaskReader } from '../clients/task-reader.js';
import { TaskWriter } from '../clients/task-writer.js';
import type { GatewayConfig } from '../config.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The tasks service, promisified, with the configured deadline (GRPC_DEADLINE_MS). */
    tasksApi: TasksApi;
    /** Opens a tasks.v1.RevocationService.WatchRevocations stream (plugins/revocations.ts holds it). */
    watchRevocations: () => RevocationCall;
    /** tasks.v1.RevocationService unary calls (the live revoked OAuth grants). */
    revocationsApi: RevocationsApi;
    /** tasks.v1.RateLimitService (plugins/rate-limit-sync.ts). */
    rateLimitsApi: RateLimitsApi;
    /** Batched task reads (GET /v1/tasks/:id). */
    taskReader: TaskReader;
    /** Coalesced task writes (POST /v1/tasks, PATCH /v1/tasks/:id). */
    taskWriter: TaskWriter;
    /** Task lists with a per-replica copy validated on every request (GET /v1/projects/:id/tasks). */
    taskListReader: TaskListReader;
    /** tasks.v1.IdempotencyService: Idempotency-Key claims and stored answers (plugins/idempotency.ts). */
    idempotencyApi: IdempotencyApi;
    /** The attachments service, promisified, with the configured deadline (GRPC_DEADLINE_MS). */
    attachmentsApi: AttachmentsApi;
    /** The webhooks service, promisified, with the configured deadline (GRPC_DEADLINE_MS). */
    webhooksApi: WebhooksApi;
    /** audit.v1.AuditService of tasks, attachments and webhooks (GET /v1/audit merges them). */
    auditApis: { tasks: AuditApi; attachments: AuditApi; webhooks: AuditApi };
    /** grpc.health.v1 checks of the backends: reported by /readyz, never a reason to be unready. */
    backendChecks: ReadinessCheck[];
  }
}

export interface BackendsOptions {
  config: GatewayConfig;
  metrics: GrpcClientMetrics;
  /** Counts streamed task list reads by kind (metrics.ts `taskListStreamReads`). */
  taskListStreamReads: Counter<'kind'>;
}

/**
 * The gRPC clients of the backend services, one channel each shared by every request, opened here
 * and closed when the app closes (after the server stopped taking requests).
 */
async function backendsPlugin(app: FastifyInstance, options: BackendsOptions): Promise<void> {
  const backends = connectBackends(options.config, options.metrics);
  app.decorate('tasksApi', backends.tasks);
  app.decorate('watchRevocations', backends.watchRevocations);
  app.decorate('revocationsApi', backends.revocations);
  app.decorate('rateLimitsApi', backends.rateLimits);
  app.decorate('taskReader', new TaskReader(backends.tasks));
  app.decorate(
    'taskListReader',
    new TaskListReader(backends.tasks, backends.streamTasks, options.config.GRPC_DEADLINE_MS, (kind) => options.taskListStreamReads.inc({ kind })),
  );
  app.decorate('taskWriter', new TaskWriter(backends.tasks));
  app.decorate('idempotencyApi', backends.idempotency);
  app.decorate('attachmentsApi', backends.attachments);
  app.decorate('webhooksApi', backends.webhooks);
  app.decorate('auditApis', backends.audit);
  app.decorate('backendChecks', backends.health);
  app.addHook('onClose', async () => backends.close());
}

export default fp(backendsPlugin, { name: 'backends' });
