import { createLogger, createMetricsRegistry, createPool, exitOnStartupFailure, serveBackend, untilFirstSuccess } from '@tws/common';
import { connectTasks } from './clients/tasks.js';
import { loadConfig } from './config.js';
import { attachmentsService } from './handlers/attachments-service.js';
import { attachmentMetrics } from './metrics.js';
import { attachmentsGrpcService } from './server.js';
import { createObjectStore } from './store/object-store.js';
import { createSweeper } from './workers/sweeper.js';

const logger = createLogger('attachments');
try {
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  const registry = createMetricsRegistry('attachments');
  const metrics = attachmentMetrics(registry);
  const pool = createPool({
    url: config.DATABASE_URL,
    schema: 'attachments',
    applicationName: 'attachments',
    max: config.DATABASE_POOL_SIZE,
  });
  const store = createObjectStore(config);
  // No client metrics yet: the interceptor of grpcClientOptions(service, metrics) in @tws/common makes
  // every call fail ("nextStatus is not a function"). Pass `metrics: grpcClientMetrics(registry)` once fixed.
  const tasks = connectTasks({ target: config.TASKS_GRPC_TARGET, deadlineMs: config.GRPC_DEADLINE_MS });
  const service = attachmentsService({ pool, store, tasks, metrics, logger, downloadUrlTtlSeconds: config.DOWNLOAD_URL_TTL_SECONDS });
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
  await serveBackend({
    logger,
    registry,
    host: config.HOST,
    grpcPort: config.GRPC_PORT,
    opsPort: config.OPS_PORT,
    grpc: [attachmentsGrpcService(service, { logger, registry })],
    // The bucket must be found once (a wrong bucket or credentials never become ready); after that
    // an S3 outage fails only the calls that touch objects (registration, the sweeper), while lists,
    // upload and download URLs (signed locally) keep working.
    readiness: [
      { name: 'postgres', check: async () => void (await pool.query('SELECT 1')) },
      untilFirstSuccess({
        name: 'object storage',
        check: async () => {
          if (!(await store.bucketExists())) throw new Error(`bucket ${config.S3_BUCKET} is missing`);
        },
      }),
    ],
    workers: [{ name: 'sweeper', run: () => sweeper.stop() }],
    resources: [
      { name: 'tasks client', run: async () => tasks.close() },
      { name: 'object store client', run: async () => store.close() },
      { name: 'postgres pool', run: () => pool.end() },
    ],
  });
  sweeper.start();
} catch (error) {
  exitOnStartupFailure(logger, error);
}
