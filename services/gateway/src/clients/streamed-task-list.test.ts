import { type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { FakeStreamCall as FakeCall, streamChunk as chunk } from '../testing/fake-stream-call.js';
import { StreamedTaskList, streamedListHighWaterMark, type StreamTasksCall } from './streamed-task-list.js';

const open = (call: FakeCall, firstMessageMs = 1000): StreamedTaskList => new StreamedTaskList(call as unknown as StreamTasksCall, firstMessageMs);

async function readAll(body: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of body) parts.push(part as Buffer);
  return Buffer.concat(parts).toString();
}

describe('StreamedTaskList', () => {
  it('is the concatenation of the chunks, with the first message version, once the call ended OK', async () => {
    const call = new FakeCall();
    const body = open(call);
    call.push(chunk('[1,', '7'));
    call.push(chunk('2]'));
    expect(await body.version).toBe('7');
    call.finish(grpc.status.OK);
    expect(await readAll(body)).toBe('[1,2]');
    expect(call.cancelled).toBe(false);
  });

  it('fails (never ends) when the call fails after some chunks: the response is cut, not completed', async () => {
    const call = new FakeCall();
    const body = open(call);
    call.push(chunk('[1,', '7'));
    expect(await body.version).toBe('7');
    call.finish(grpc.status.UNAVAILABLE);
    await expect(readAll(body)).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
  });

  it('rejects its version with the call failure before any message', async () => {
    const call = new FakeCall();
    const body = open(call);
    call.finish(grpc.status.NOT_FOUND);
    await expect(body.version).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('gives up (DEADLINE_EXCEEDED, the call cancelled) when no message comes in time', async () => {
    const call = new FakeCall();
    const body = open(call, 20);
    await expect(body.version).rejects.toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED });
    expect(call.cancelled).toBe(true);
  });

  it('refuses a first message without a version', async () => {
    const call = new FakeCall();
    const body = open(call);
    call.push(chunk('[1]'));
    await expect(body.version).rejects.toThrow(/version/);
    expect(call.cancelled).toBe(true);
  });

  it('pauses the call while its reader does not read, and cancels it when destroyed (the client went away)', async () => {
    const call = new FakeCall();
    const body = open(call);
    const big = 'x'.repeat(streamedListHighWaterMark);
    call.push(chunk(big, '3'));
    await body.version;
    for (let index = 0; index < 8; index++) call.push(chunk(big));
    // Nobody reads the body: past its high-water mark the call stops flowing.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(call.isPaused()).toBe(true);
    expect(body.readableLength).toBeLessThanOrEqual(2 * streamedListHighWaterMark);
    // A slow reader that gives up: the pipeline destroys the body, which cancels the call.
    const reader = new Writable({ highWaterMark: 1, write: (_chunk, _encoding, done) => done(new Error('client went away')) });
    await expect(pipeline(body, reader)).rejects.toThrow('client went away');
    expect(call.cancelled).toBe(true);
  });
});
