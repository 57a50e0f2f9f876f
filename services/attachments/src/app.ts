import {
  auditRetention,
  auditServiceRegistration,
  createPool,
  grpcClientMetrics,
  grpcServerMetrics,
  objectStoreMetrics,
  postgresReadiness,
  untilFirstSuccess,
  type BackendApp,
  type Logger,
} from '@tws/common';
import type { Registry } from 'prom-client';
import { loadAuditProto } from '@tws/proto-types';
import { attachmentsGrpcService } from './api/attachments-service.js';
import { connectTasks } from './clients/tasks.js';
import type { AttachmentsConfig } from './config.js';
import { attachmentsDomain } from './domain/attachments.js';
import { attachmentMetrics } from './metrics.js';
import { createObjectStore } from './store/object-store.js';
import { createSweeper } from './workers/sweeper.js';

/**
 * The composition root: wires store/, clients/, domain/, api/ and workers/ from the configuration.
 * main.ts runs it with runBackend; nothing here listens or traps signals.
 */
export function buildApp(config: AttachmentsConfig, logger: Logger, registry: Registry): BackendApp {
  const metrics = attachmentMetrics(registry);
  const pool = createPool({
    url: config.DATABASE_URL,
    schema: 'attachments',
    applicationName: 'attachments',
    max: config.DATABASE_POOL_SIZE,
    metrics: { registry },
  });
  const store = createObjectStore(config, objectStoreMetrics(registry));
  const tasks = connectTasks({ target: config.TASKS_GRPC_TARGET, deadlineMs: config.GRPC_DEADLINE_MS, metrics: grpcClientMetrics(registry) });
  const attachments = attachmentsDomain({ pool, store, tasks, metrics, logger, downloadUrlTtlSeconds: config.DOWNLOAD_URL_TTL_SECONDS });
  const sweeper = createSweeper({
    pool,
    store,
    tasks,
    metrics,
    logger: logger.child({ component: 'sweeper' }),
    intervalMs: config.SWEEP_INTERVAL_MS,
    batchSize: config.SWEEP_BATCH_SIZE,
    uploadGraceMs: config.UPLOAD_GRACE_MS,
  });
  const audit = auditRetention({ pool, retentionDays: config.AUDIT_RETENTION_DAYS, intervalMs: config.AUDIT_SWEEP_INTERVAL_MS, logger: logger.child({ component: 'audit' }) });
  const serverMetrics = grpcServerMetrics(registry);
  return {
    grpc: [
      attachmentsGrpcService(attachments, { logger, metrics: serverMetrics }),
      auditServiceRegistration(loadAuditProto().audit.v1.AuditService.service, { pool, logger, metrics: serverMetrics }),
    ],
    // The bucket must be found once (a wrong bucket or credentials never become ready); after that
    // an S3 outage fails only the calls that touch objects (registration, the sweeper), while lists,
    // upload and download URLs (signed locally) keep working.
    readiness: [
      postgresReadiness(pool),
      untilFirstSuccess({
        name: 'object storage',
        check: async () => {
          if (!(await store.bucketExists())) throw new Error(`bucket ${config.S3_BUCKET} is missing`);
        },
      }),
    ],
    async start() {
      sweeper.start();
      audit.start();
    },
    workers: [
      { name: 'sweeper', run: () => sweeper.stop() },
      { name: 'audit retention', run: () => audit.stop() },
    ],
    resources: [
      { name: 'tasks client', run: async () => tasks.close() },
      { name: 'object store client', run: async () => store.close() },
      { name: 'postgres pool', run: () => pool.end() },
    ],
  };
}
