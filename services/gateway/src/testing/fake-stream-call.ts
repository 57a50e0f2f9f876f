import { Readable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';

/** A StreamTasks call a test drives: messages, then a status, as grpc-js emits them. */
export class FakeStreamCall extends Readable {
  cancelled = false;
  constructor() {
    super({ objectMode: true });
  }
  override _read(): void {}
  cancel(): void {
    this.cancelled = true;
  }
  /** grpc-js: the end of the messages, then (for a failure) 'error', then 'status'. */
  finish(code: grpc.status): void {
    this.push(null);
    if (code !== grpc.status.OK) this.emit('error', Object.assign(new Error('failed'), { code, details: 'failed', metadata: new grpc.Metadata() }));
    this.emit('status', { code, details: '', metadata: new grpc.Metadata() });
  }
}

/** A StreamTasks message: a chunk of the array (the version set in the first one only). */
export const streamChunk = (text: string, version = '0') => ({ version, jsonChunk: Buffer.from(text) });
