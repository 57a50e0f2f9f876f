import * as grpc from '@grpc/grpc-js';
import {
  DomainError,
  endGrpcSpan,
  findNul,
  grpcStatusOfFailure,
  inGrpcServerContext,
  isDatabaseUnavailable,
  notFound,
  nulMessage,
  requestIdFromMetadata,
  runWithRequestId,
  SpanKind,
  startGrpcServerSpan,
  type GrpcServerMetrics,
  type Logger,
  type Pool,
} from '@tws/common';
import type { StreamTasksRequest__Output } from '@tws/proto-types/generated/tasks/v1/StreamTasksRequest';
import type { StreamTasksResponse } from '@tws/proto-types/generated/tasks/v1/StreamTasksResponse';
import { pathId } from '../domain/validation.js';
import { TaskListSnapshot } from '../store/task-list-stream.js';
import { StreamSlots } from './stream-slots.js';

type StreamCall = grpc.ServerWritableStream<StreamTasksRequest__Output, StreamTasksResponse>;

export interface TaskListStreamSettings {
  /** Streams served at once (TASK_LIST_MAX_STREAMS); each holds a database connection; more wait their turn. */
  maxStreams: number;
  /** Longest life of a stream (TASK_LIST_STREAM_TIMEOUT_MS). */
  timeoutMs: number;
}

/** statement_timeout of each batch (~64 KiB of JSON: a few milliseconds on a healthy database). */
const batchStatementTimeoutMs = 10_000;
/**
 * Messages written and not yet taken by HTTP/2 (the reader's flow-control window) before the next
 * chunk is read: two, so the next batch is rendered while the last one is sent, and no more.
 */
const maxUnsentMessages = 2;
/** Streams waiting for one of the TASK_LIST_MAX_STREAMS slots at most, and how long each waits; then UNAVAILABLE. */
const slotQueue = { maxWaiting: 100, maxWaitMs: 5_000 };

class StreamEnded extends Error {}

/**
 * tasks.v1.TasksService.StreamTasks: the task list of a snapshot (store/task-list-stream.ts), sent
 * chunk by chunk at the reader's pace. The next batch is read only while fewer than
 * `maxUnsentMessages` messages wait for HTTP/2 to take them, so a slow reader slows the database
 * walk instead of growing this process. Cancellation (the gateway's client went away), the deadline
 * and `timeoutMs` all end the transaction at the next step (a running batch finishes first, bounded
 * by its statement timeout).
 */
export function streamTasksHandler(deps: {
  pool: Pool;
  logger: Logger;
  metrics: GrpcServerMetrics;
  settings: TaskListStreamSettings;
}): grpc.handleServerStreamingCall<StreamTasksRequest__Output, StreamTasksResponse> {
  const { pool, logger, metrics, settings } = deps;
  const labels = { grpc_service: 'tasks.v1.TasksService', grpc_method: 'StreamTasks' };
  const slots = new StreamSlots({ limit: settings.maxStreams, ...slotQueue });

  async function serve(call: StreamCall, signal: AbortSignal): Promise<void> {
    const nulAt = findNul(call.request);
    if (nulAt !== undefined) throw new DomainError('invalid_argument', `${nulAt.slice(1)}: ${nulMessage}`);
    const workspaceId = pathId(call.request.workspaceId, 'workspace');
    const projectId = pathId(call.request.projectId, 'project');
    const snapshot = await TaskListSnapshot.open(pool, workspaceId, projectId, {
      statementTimeoutMs: batchStatementTimeoutMs,
      idleTimeoutMs: settings.timeoutMs,
    });
    if (snapshot === null) throw notFound('project not found');
    try {
      let unsent = 0;
      let wake: (() => void) | undefined;
      const sent = (): void => {
        unsent -= 1;
        wake?.();
      };
      // A fresh promise per wait, its listener removed after: racing one long-lived promise instead
      // would keep every chunk alive (each race's result hangs on the pending promise) until the end.
      const sentOrStopped = (): Promise<void> =>
        new Promise<void>((resolve) => {
          const done = (): void => {
            wake = undefined;
            signal.removeEventListener('abort', done);
            resolve();
          };
          wake = done;
          signal.addEventListener('abort', done, { once: true });
        });
      let version = snapshot.version;
      for (;;) {
        if (signal.aborted) throw new StreamEnded();
        // A running batch is not interrupted: it is bounded by its statement timeout.
        const chunk = await snapshot.next();
        if (chunk === null) return;
        if (signal.aborted) throw new StreamEnded();
        unsent += 1;
        const room = call.write({ version, jsonChunk: Buffer.from(chunk) }, sent);
        version = '0';
        while ((!room && unsent > 0) || unsent >= maxUnsentMessages) {
          await sentOrStopped();
          if (signal.aborted) throw new StreamEnded();
          if (unsent < maxUnsentMessages) break;
        }
      }
    } finally {
      await snapshot.close();
    }
  }

  return (call) => {
    const stopTimer = metrics.handling.startTimer(labels);
    const traced = startGrpcServerSpan(labels.grpc_service, labels.grpc_method, call.metadata);
    const finish = (code: grpc.status, details?: string): void => {
      const codeName = grpc.status[code] ?? String(code);
      endGrpcSpan(traced?.span, code, SpanKind.SERVER);
      stopTimer({ grpc_code: codeName });
      metrics.handled.inc({ ...labels, grpc_code: codeName });
      if (code === grpc.status.OK) call.end();
      else if (!call.cancelled) call.emit('error', { code, details });
    };
    const abort = new AbortController();
    const cancelled = (): void => abort.abort();
    call.on('cancelled', cancelled);
    const run = async (): Promise<void> => {
      if (!(await slots.acquire(abort.signal))) {
        call.off('cancelled', cancelled);
        if (call.cancelled) finish(grpc.status.CANCELLED);
        else finish(grpc.status.UNAVAILABLE, 'too many task lists are being streamed, retry later');
        return;
      }
      const timer = setTimeout(() => abort.abort(), settings.timeoutMs);
      try {
        await serve(call, abort.signal);
        finish(grpc.status.OK);
      } catch (error) {
        if (error instanceof StreamEnded) {
          if (call.cancelled) return finish(grpc.status.CANCELLED);
          logger.warn({ timeoutMs: settings.timeoutMs }, 'task list stream cut off: its reader took longer than TASK_LIST_STREAM_TIMEOUT_MS');
          return finish(grpc.status.DEADLINE_EXCEEDED, 'task list stream took too long');
        }
        if (error instanceof DomainError) return finish(grpcStatusOfFailure[error.kind], error.message);
        if (isDatabaseUnavailable(error)) {
          logger.warn({ err: error, method: 'StreamTasks' }, 'database unavailable');
          return finish(grpc.status.UNAVAILABLE, 'database unavailable, retry later');
        }
        logger.error({ err: error, method: 'StreamTasks' }, 'unhandled error in gRPC handler');
        return finish(grpc.status.INTERNAL, 'internal error');
      } finally {
        clearTimeout(timer);
        call.off('cancelled', cancelled);
        slots.release();
      }
    };
    const requestId = requestIdFromMetadata(call.metadata);
    const tracedRun = (): Promise<void> => inGrpcServerContext(traced, run);
    if (requestId === undefined) void tracedRun();
    else void runWithRequestId(requestId, tracedRun);
  };
}
