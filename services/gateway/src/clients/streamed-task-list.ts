import { Readable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import type { StreamTasksResponse__Output } from '@tws/proto-types/generated/tasks/v1/StreamTasksResponse';

/** Bytes of a streamed list buffered towards the client: about one chunk is read ahead, no more. */
export const streamedListHighWaterMark = 64 * 1024;

export type StreamTasksCall = grpc.ClientReadableStream<StreamTasksResponse__Output>;

/** A gRPC-shaped failure, so the error handler answers it as it answers a backend's (503 for DEADLINE_EXCEEDED). */
function serviceError(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata: new grpc.Metadata() });
}

/**
 * A tasks.v1.TasksService.StreamTasks call as the response body: each message's chunk pushed as
 * it comes, the call paused while the client does not read (so HTTP/2 flow control holds the tasks
 * service back, and this process holds about `streamedListHighWaterMark` plus one chunk per list).
 * It ends only when the call ended with OK after its last message; a failing call fails the body
 * (the response is cut short, never completed with a partial array). Destroying it (the client went
 * away) cancels the call, which ends the tasks service's snapshot transaction.
 *
 * `version` is the list version of the first message (for the ETag, known before the body is sent);
 * it rejects when the call fails or sends nothing within `firstMessageMs`.
 */
export class StreamedTaskList extends Readable {
  readonly version: Promise<string>;
  private drained = false;
  private statusOk = false;

  constructor(
    private readonly call: StreamTasksCall,
    firstMessageMs: number,
  ) {
    super({ highWaterMark: streamedListHighWaterMark });
    let settle: { resolve: (version: string) => void; reject: (error: Error) => void } | undefined;
    this.version = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
    // Awaited by the reader; a failure before anyone awaits is not an unhandled rejection.
    this.version.catch(() => undefined);
    const waiting = setTimeout(() => this.destroy(serviceError(grpc.status.DEADLINE_EXCEEDED, 'StreamTasks sent nothing in time')), firstMessageMs);
    let first = true;
    call.on('data', (message: StreamTasksResponse__Output) => {
      if (first) {
        first = false;
        clearTimeout(waiting);
        if (!/^[1-9]\d{0,18}$/.test(message.version)) {
          this.destroy(new Error(`StreamTasks answered version ${JSON.stringify(message.version)}`));
          return;
        }
        settle?.resolve(message.version);
      }
      if (message.jsonChunk.length > 0 && !this.push(message.jsonChunk)) call.pause();
    });
    call.on('end', () => {
      this.drained = true;
      this.finishIfDone();
    });
    call.on('status', (status: grpc.StatusObject) => {
      this.statusOk = status.code === grpc.status.OK;
      this.finishIfDone();
    });
    call.on('error', (error: Error) => this.destroy(error));
    this.once('close', () => {
      clearTimeout(waiting);
      settle?.reject(serviceError(grpc.status.CANCELLED, 'task list stream closed before its first message'));
    });
    const failed = (error: Error): void => settle?.reject(error);
    this.once('error', failed);
  }

  private finishIfDone(): void {
    // 'end' alone could follow a cut call; 'status' alone could precede messages still buffered.
    if (this.drained && this.statusOk) this.push(null);
  }

  override _read(): void {
    this.call.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // A call that ended OK has nothing to cancel (autoDestroy after the last chunk comes here too).
    if (!this.drained || !this.statusOk) this.call.cancel();
    callback(error);
  }
}
