import { auditServiceRegistration, type GrpcServerMetrics, type GrpcServiceRegistration, type Logger, type Pool } from '@tws/common';
import { loadAuditProto, loadTasksProto } from '@tws/proto-types';
import type { RevocationHub } from '../domain/revocation-hub.js';
import type { Revocations } from '../domain/revocation-publisher.js';
import type { IdempotencySettings } from '../domain/idempotency.js';
import { adminServiceHandlers } from './admin-service.js';
import { idempotencyServiceHandlers } from './idempotency-service.js';
import { labelsServiceHandlers } from './labels-service.js';
import { rateLimitServiceHandlers } from './rate-limit-service.js';
import { revocationServiceHandlers } from './revocation-service.js';
import { settingsServiceHandlers } from './settings-service.js';
import { taskPageServiceHandlers } from './task-page-service.js';
import { tasksServiceHandlers } from './tasks-service.js';
import type { TaskListStreamSettings } from './task-list-stream-service.js';

/** The gRPC services of the tasks context, ready for serveBackend (or a test server). */
export function buildGrpcServices(deps: {
  pool: Pool;
  logger: Logger;
  metrics: GrpcServerMetrics;
  revocations: Revocations;
  revocationHub: RevocationHub;
  idempotency: IdempotencySettings;
  taskLists: TaskListStreamSettings;
}): GrpcServiceRegistration[] {
  const proto = loadTasksProto().tasks.v1;
  return [
    { name: 'tasks.v1.TasksService', definition: proto.TasksService.service, implementation: tasksServiceHandlers(deps) },
    { name: 'tasks.v1.AdminService', definition: proto.AdminService.service, implementation: adminServiceHandlers(deps) },
    { name: 'tasks.v1.SettingsService', definition: proto.SettingsService.service, implementation: settingsServiceHandlers(deps) },
    { name: 'tasks.v1.TaskPageService', definition: proto.TaskPageService.service, implementation: taskPageServiceHandlers(deps) },
    { name: 'tasks.v1.LabelsService', definition: proto.LabelsService.service, implementation: labelsServiceHandlers(deps) },
    { name: 'tasks.v1.RateLimitService', definition: proto.RateLimitService.service, implementation: rateLimitServiceHandlers(deps) },
    {
      name: 'tasks.v1.IdempotencyService',
      definition: proto.IdempotencyService.service,
      implementation: idempotencyServiceHandlers({ pool: deps.pool, logger: deps.logger, metrics: deps.metrics, settings: deps.idempotency }),
    },
    {
      name: 'tasks.v1.RevocationService',
      definition: proto.RevocationService.service,
      implementation: revocationServiceHandlers({ hub: deps.revocationHub, logger: deps.logger, metrics: deps.metrics, pool: deps.pool, revocations: deps.revocations }),
    },
    // The audit events of the things this service owns (projects … members), for GET /v1/audit.
    auditServiceRegistration(loadAuditProto().audit.v1.AuditService.service, { pool: deps.pool, logger: deps.logger, metrics: deps.metrics }),
  ];
}
