import * as grpc from '@grpc/grpc-js';
import { callServerStream, grpcClientOptions, grpcHealthChecker, unaryApi, type GrpcClientMetrics, type ReadinessCheck, type UnaryApi } from '@tws/common';
import { loadAttachmentsProto, loadAuditProto, loadTasksProto, loadWebhooksProto } from '@tws/proto-types';
import type { AuditServiceClient } from '@tws/proto-types/generated/audit/v1/AuditService';
import type { AttachmentsServiceClient } from '@tws/proto-types/generated/attachments/v1/AttachmentsService';
import type { IdempotencyServiceClient } from '@tws/proto-types/generated/tasks/v1/IdempotencyService';
import type { RateLimitServiceClient } from '@tws/proto-types/generated/tasks/v1/RateLimitService';
import type { RevocationServiceClient } from '@tws/proto-types/generated/tasks/v1/RevocationService';
import type { TasksServiceClient } from '@tws/proto-types/generated/tasks/v1/TasksService';
import type { WebhooksServiceClient } from '@tws/proto-types/generated/webhooks/v1/WebhooksService';
import type { GatewayConfig } from '../config.js';
import type { RevocationCall } from './revocation-stream.js';
import type { OpenTaskListStream } from './task-list-reader.js';

/**
 * Deadline of a StreamTasks call: an outer bound only. The tasks service ends a stream itself after
 * its TASK_LIST_STREAM_TIMEOUT_MS (at most 1 h), and keepalive ends the call if it stops answering.
 */
const taskListStreamDeadlineMs = 61 * 60_000;

/*
 * The unary RPCs the gateway calls on each service (UnaryApi and unaryApi accept only names the
 * generated client has).
 */
const tasksRpcs = [
  'AuthenticateApiKey', 'GetMembership', 'GetWorkspace', 'ListMembers', 'ListStatuses',
  'ListProjects', 'CreateProject', 'UpdateProject', 'GetProject', 'ListSections', 'CreateSection', 'UpdateSection', 'GetSection',
  'ListTasks', 'ListTaskPage', 'GetTasks', 'CreateTask', 'UpdateTask', 'CreateTasks', 'UpdateTasks', 'DeleteTask', 'CreateComment', 'DeleteComment',
  'ListTaskComments', 'GetUsage',
] as const;
const attachmentsRpcs = [
  'CreateUpload', 'RegisterAttachment', 'ListTaskAttachments', 'GetDownloadUrl', 'DeleteTaskAttachments', 'GetWorkspaceUsage',
] as const;
const webhooksRpcs = [
  'CreateEndpoint',
  'ListEndpoints',
  'DeleteEndpoint',
  'ListDeliveries',
  'RedeliverDelivery',
  'UpdateEndpoint',
  'RotateEndpointSecret',
  'SendTestEvent',
] as const;

/** The stored answers of POSTs sent with an Idempotency-Key (plugins/idempotency.ts). */
const idempotencyRpcs = ['BeginIdempotentRequest', 'CompleteIdempotentRequest', 'ReleaseIdempotentRequest'] as const;
export type IdempotencyApi = UnaryApi<IdempotencyServiceClient, (typeof idempotencyRpcs)[number]>;

/** The revoked grants the gateway reads (its own client: the stream shares the channel). */
const revocationRpcs = ['ListRevokedGrants'] as const;
export type RevocationsApi = UnaryApi<RevocationServiceClient, (typeof revocationRpcs)[number]>;
/** The shared rate limit's sync (plugins/rate-limit-sync.ts). */
const rateLimitRpcs = ['SyncRateLimits'] as const;
export type RateLimitsApi = UnaryApi<RateLimitServiceClient, (typeof rateLimitRpcs)[number]>;

/** audit.v1.AuditService, which tasks, attachments and webhooks each implement over their own rows (GET /v1/audit). */
const auditRpcs = ['ListAudit'] as const;
export type AuditApi = UnaryApi<AuditServiceClient, (typeof auditRpcs)[number]>;

/** Promise-returning TasksService calls with the gateway's deadline: `await tasks.GetWorkspace({ … })`. */
export type TasksApi = UnaryApi<TasksServiceClient, (typeof tasksRpcs)[number]>;
/** Promise-returning AttachmentsService calls with the gateway's deadline. */
export type AttachmentsApi = UnaryApi<AttachmentsServiceClient, (typeof attachmentsRpcs)[number]>;
/** Promise-returning WebhooksService calls with the gateway's deadline. */
export type WebhooksApi = UnaryApi<WebhooksServiceClient, (typeof webhooksRpcs)[number]>;

/** The backend services, one channel each, shared by all requests. */
export interface Backends {
  tasks: TasksApi;
  attachments: AttachmentsApi;
  /**
   * The deadline (GRPC_DEADLINE_MS, 10 s by default) leaves room for the registration's DNS check
   * (a few seconds at most).
   */
  webhooks: WebhooksApi;
  /**
   * Opens a tasks.v1.RevocationService.WatchRevocations stream (no deadline: it lives as long as the
   * connection; round robin puts it on one tasks replica, and every replica hears every revocation).
   */
  watchRevocations(): RevocationCall;
  /** Opens a tasks.v1.TasksService.StreamTasks call (a large task list; clients/streamed-task-list.ts). */
  streamTasks: OpenTaskListStream;
  /** tasks.v1.RevocationService.ListRevokedGrants (live revoked OAuth grants). */
  revocations: RevocationsApi;
  /** tasks.v1.IdempotencyService (same tasks target, its own client). */
  idempotency: IdempotencyApi;
  /** tasks.v1.RateLimitService (the buckets every gateway replica shares). */
  rateLimits: RateLimitsApi;
  /** The audit trail of each service that writes one (same targets, own clients). */
  audit: { tasks: AuditApi; attachments: AuditApi; webhooks: AuditApi };
  /** grpc.health.v1 check of each backend (reported by /readyz, not required by it). */
  health: ReadinessCheck[];
  /** Closes the channels and the health checkers. */
  close(): void;
}

/** Opens the channels (lazily connected by grpc-js) with the shared client options and metrics. */
export function connectBackends(config: GatewayConfig, metrics: GrpcClientMetrics): Backends {
  const insecure = grpc.credentials.createInsecure();
  const options = (service: string): grpc.ClientOptions => grpcClientOptions(service, metrics);
  const tasks = new (loadTasksProto().tasks.v1.TasksService)(config.TASKS_GRPC_TARGET, insecure, options('tasks.v1.TasksService'));
  // Its own client without the metrics interceptor: a stream's lifetime is not a call duration.
  const revocations: RevocationServiceClient = new (loadTasksProto().tasks.v1.RevocationService)(
    config.TASKS_GRPC_TARGET,
    insecure,
    grpcClientOptions('tasks.v1.RevocationService'),
  );
  const idempotency = new (loadTasksProto().tasks.v1.IdempotencyService)(config.TASKS_GRPC_TARGET, insecure, options('tasks.v1.IdempotencyService'));
  const rateLimits: RateLimitServiceClient = new (loadTasksProto().tasks.v1.RateLimitService)(
    config.TASKS_GRPC_TARGET,
    insecure,
    options('tasks.v1.RateLimitService'),
  );
  const attachments = new (loadAttachmentsProto().attachments.v1.AttachmentsService)(
    config.ATTACHMENTS_GRPC_TARGET,
    insecure,
    options('attachments.v1.AttachmentsService'),
  );
  const webhooks = new (loadWebhooksProto().webhooks.v1.WebhooksService)(config.WEBHOOKS_GRPC_TARGET, insecure, options('webhooks.v1.WebhooksService'));
  const Audit = loadAuditProto().audit.v1.AuditService;
  const auditClients = {
    tasks: new Audit(config.TASKS_GRPC_TARGET, insecure, options('audit.v1.AuditService')),
    attachments: new Audit(config.ATTACHMENTS_GRPC_TARGET, insecure, options('audit.v1.AuditService')),
    webhooks: new Audit(config.WEBHOOKS_GRPC_TARGET, insecure, options('audit.v1.AuditService')),
  };
  const peers = {
    tasks: config.TASKS_GRPC_TARGET,
    attachments: config.ATTACHMENTS_GRPC_TARGET,
    webhooks: config.WEBHOOKS_GRPC_TARGET,
  };
  const healthCheckers = Object.entries(peers).map(([name, target]) => ({ name, checker: grpcHealthChecker(target) }));
  const deadlineMs = config.GRPC_DEADLINE_MS;
  return {
    tasks: unaryApi(tasks, tasksRpcs, deadlineMs),
    attachments: unaryApi(attachments, attachmentsRpcs, deadlineMs),
    webhooks: unaryApi(webhooks, webhooksRpcs, deadlineMs),
    watchRevocations: () => revocations.WatchRevocations(),
    streamTasks: (request) =>
      callServerStream('/tasks.v1.TasksService/StreamTasks', config.TASKS_GRPC_TARGET, (metadata) =>
        tasks.StreamTasks(request, metadata, { deadline: Date.now() + taskListStreamDeadlineMs }),
      ),
    revocations: unaryApi(revocations, revocationRpcs, deadlineMs),
    idempotency: unaryApi(idempotency, idempotencyRpcs, deadlineMs),
    rateLimits: unaryApi(rateLimits, rateLimitRpcs, deadlineMs),
    audit: {
      tasks: unaryApi(auditClients.tasks, auditRpcs, deadlineMs),
      attachments: unaryApi(auditClients.attachments, auditRpcs, deadlineMs),
      webhooks: unaryApi(auditClients.webhooks, auditRpcs, deadlineMs),
    },
    health: healthCheckers.map(({ name, checker }) => ({ name: `${name} service`, check: () => checker.check() })),
    close() {
      tasks.close();
      revocations.close();
      idempotency.close();
      rateLimits.close();
      attachments.close();
      webhooks.close();
      for (const client of Object.values(auditClients)) client.close();
      for (const { checker } of healthCheckers) checker.close();
    },
  };
}
