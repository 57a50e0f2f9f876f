import { PeriodicJob, type Logger, type Pool } from '@tws/common';
import type { TasksPort } from '../clients/tasks.js';
import * as repo from '../store/repository.js';
import type { AttachmentMetrics } from '../metrics.js';
import type { ObjectStore } from '../store/object-store.js';

export interface SweeperOptions {
  pool: Pool;
  store: ObjectStore;
  tasks: TasksPort;
  metrics: AttachmentMetrics;
  logger: Logger;
  intervalMs: number;
  batchSize: number;
  /** How long after expiry an unregistered upload is removed. */
  uploadGraceMs: number;
}

export interface SweepReport {
  /** False when another replica held the sweeper lock. */
  ran: boolean;
  abandonedUploads: number;
  revokedUploads: number;
  /** Upload objects of registered uploads removed after the URL expired (the attachment has its own copy). */
  clearedUploadObjects: number;
  tasksChecked: number;
  orphanedAttachments: number;
}

/** One sweeper at a time across replicas: a session-level Postgres advisory lock. */
const LOCK_KEY = 'attachments:sweeper';

/**
 * Removes what nobody can use any more, so no object accumulates:
 * - uploads never registered (or whose attachment was removed) once their upload URL has expired
 *   (plus a grace period), row, upload object and any attachment copy a failed registration left;
 * - the upload object of a registered upload once its URL has expired (plus grace): the attachment
 *   serves its own copy, and the upload key may hold bytes PUT again after registration;
 * - attachments whose task no longer exists (tasks.GetTasks finds nothing), should the gateway's
 *   DeleteTaskAttachments call after a task deletion have failed.
 * Runs every `intervalMs` on the replica that holds the advisory lock; `stop()` ends it (SIGTERM).
 */
export function createSweeper(options: SweeperOptions) {
  const { pool, store, tasks, metrics, logger } = options;
  /** Set by stop(): a sweep in progress ends between items. */
  let stopping = false;
  /** Where the walk over tasks with attachments continues (kept per replica; restarts at the beginning). */
  let taskCursor: string | null = null;

  async function sweepUploads(now: Date, report: SweepReport): Promise<void> {
    const expired = await repo.findExpiredUploads(pool, new Date(now.getTime() - options.uploadGraceMs), options.batchSize);
    for (const upload of expired) {
      if (stopping) return;
      const removed = await repo.deleteUnregisteredUpload(pool, upload.id, (keys) => store.remove(keys));
      if (!removed) continue;
      if (upload.revokedAt) {
        report.revokedUploads += 1;
        metrics.sweeperRemoved.inc({ reason: 'revoked_upload' });
      } else {
        report.abandonedUploads += 1;
        metrics.sweeperRemoved.inc({ reason: 'abandoned_upload' });
      }
    }
  }

  async function sweepRegisteredUploadObjects(now: Date, report: SweepReport): Promise<void> {
    if (stopping) return;
    const uncleared = await repo.findUnclearedUploadObjects(pool, new Date(now.getTime() - options.uploadGraceMs), options.batchSize);
    if (uncleared.length === 0) return;
    // No URL can write these keys any more: removing, then marking, is safe to repeat after a failure.
    await store.remove(uncleared.map((upload) => upload.objectKey));
    await repo.markUploadObjectsCleared(pool, uncleared.map((upload) => upload.id));
    report.clearedUploadObjects += uncleared.length;
    metrics.sweeperRemoved.inc({ reason: 'registered_upload' }, uncleared.length);
  }

  async function sweepOrphans(report: SweepReport): Promise<void> {
    const batch = await repo.tasksWithAttachments(pool, taskCursor, options.batchSize);
    taskCursor = batch.length < options.batchSize ? null : (batch.at(-1)?.taskId ?? null);
    for (const { workspaceId, taskId } of batch) {
      if (stopping) return;
      report.tasksChecked += 1;
      // Any failure other than NOT_FOUND (tasks service down) ends this pass: nothing is removed on doubt.
      if (await tasks.taskExists(workspaceId, taskId)) continue;
      const removed = await repo.deleteTaskAttachments(pool, workspaceId, taskId, (keys) => store.remove(keys));
      report.orphanedAttachments += removed;
      metrics.sweeperRemoved.inc({ reason: 'task_deleted' }, removed);
      if (removed > 0) logger.info({ workspaceId, taskId, removed }, 'sweeper removed attachments of a deleted task');
    }
  }

  /** One sweep, if this replica gets the lock; `now` is injectable for tests. */
  async function runOnce(now: Date = new Date()): Promise<SweepReport> {
    const report: SweepReport = {
      ran: false,
      abandonedUploads: 0,
      revokedUploads: 0,
      clearedUploadObjects: 0,
      tasksChecked: 0,
      orphanedAttachments: 0,
    };
    const client = await pool.connect();
    // Held across S3 calls: a database restart meanwhile must fail the sweep, not crash the process.
    const onError = (): void => undefined;
    client.on('error', onError);
    let locked = false;
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [LOCK_KEY]);
      locked = rows[0]?.locked === true;
      if (!locked) return report;
      report.ran = true;
      await sweepUploads(now, report);
      await sweepRegisteredUploadObjects(now, report);
      await sweepOrphans(report);
      if (!stopping) metrics.sweeperLastSuccess.set(Date.now() / 1000);
      return report;
    } finally {
      if (locked) await client.query('SELECT pg_advisory_unlock(hashtext($1))', [LOCK_KEY]).catch(() => undefined);
      client.removeListener('error', onError);
      client.release();
    }
  }

  // Never two sweeps at once on this replica; a failed one is logged ("sweep failed; retrying at the
  // next interval") and the next comes after intervalMs; intervalMs 0 never runs.
  const job = new PeriodicJob({
    name: 'sweep',
    intervalMs: options.intervalMs,
    logger,
    run: async () => {
      const report = await runOnce();
      if (report.abandonedUploads + report.revokedUploads + report.clearedUploadObjects + report.orphanedAttachments > 0) logger.info({ report }, 'sweep done');
    },
  });

  return {
    runOnce,
    start(): void {
      stopping = false;
      job.start();
    },
    /** Stops scheduling and waits for a sweep in progress (it stops between items). */
    async stop(): Promise<void> {
      stopping = true;
      await job.stop();
    },
  };
}

export type Sweeper = ReturnType<typeof createSweeper>;
