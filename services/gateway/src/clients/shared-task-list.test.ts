import type { Readable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { FakeStreamCall, streamChunk } from '../testing/fake-stream-call.js';
import { StreamedTaskList, type StreamTasksCall } from './streamed-task-list.js';
import { joinHeadBytes, maxLagBytes, SharedTaskList, type SharedReadKind } from './shared-task-list.js';

async function readAll(body: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of body) parts.push(part as Buffer);
  return Buffer.concat(parts).toString();
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A shared list over fake calls: `calls[0]` the shared one, the next ones those a detached read opened. */
function sharedList(): { shared: SharedTaskList; calls: FakeStreamCall[]; kinds: SharedReadKind[]; closed: () => boolean } {
  const calls: FakeStreamCall[] = [];
  const kinds: SharedReadKind[] = [];
  let joiningClosed = false;
  const open = (): StreamedTaskList => {
    const call = new FakeStreamCall();
    calls.push(call);
    return new StreamedTaskList(call as unknown as StreamTasksCall, 1000);
  };
  const shared = new SharedTaskList(open(), open, { joiningClosed: () => (joiningClosed = true), read: (kind) => kinds.push(kind) });
  return { shared, calls, kinds, closed: () => joiningClosed };
}

/** The chunks of a list of `count` numbers, about `size` bytes each. */
function chunks(count: number, size: number): string[] {
  return Array.from({ length: count }, (_, index) => `${index === 0 ? '[' : ','}"${String(index).padEnd(size, '.')}"${index === count - 1 ? ']' : ''}`);
}

function send(call: FakeStreamCall, parts: string[], version: string): void {
  parts.forEach((part, index) => call.push(streamChunk(part, index === 0 ? version : '0')));
  call.finish(grpc.status.OK);
}

/** A list of 3 × maxLagBytes at version 7 read by the read that opened the call and one that joined it. */
function twoReads(): ReturnType<typeof sharedList> & { fast: Readable; slow: Readable; size: number; parts: string[] } {
  const list = sharedList();
  const fast = list.shared.open();
  const slow = list.shared.reserve().attach()!;
  const size = 60 * 1024;
  const parts = chunks(Math.ceil((3 * maxLagBytes) / size), size);
  send(list.calls[0]!, parts, '7');
  return { ...list, fast, slow, size, parts };
}

describe('SharedTaskList', () => {
  it('reads that join before joinHeadBytes came all get the whole list from one call', async () => {
    const { shared, calls, kinds, closed } = sharedList();
    const first = shared.open();
    expect(shared.joinable).toBe(true);
    const tickets = [shared.reserve()];
    const parts = chunks(20, 1000);
    calls[0]!.push(streamChunk(parts[0]!, '4'));
    calls[0]!.push(streamChunk(parts[1]!));
    expect(await shared.version).toBe('4');
    await tick();
    // Less than joinHeadBytes has come: more reads may still join.
    expect(shared.joinable).toBe(true);
    tickets.push(shared.reserve());
    send(calls[0]!, parts.slice(2), '0');
    await tick();
    // The list ended: nothing joins any more, and the start is kept only for the two still checking.
    expect(shared.joinable).toBe(false);
    expect(closed()).toBe(false);
    // The joiners attach after chunks came (their check took a moment): they get the list from its start.
    const joined = tickets.map((ticket) => ticket.attach()!);
    expect(closed()).toBe(true);
    const bodies = await Promise.all([first, ...joined].map(readAll));
    for (const body of bodies) expect(body).toBe(parts.join(''));
    expect(JSON.parse(bodies[0]!)).toHaveLength(20);
    expect(calls).toHaveLength(1);
    expect(kinds).toEqual(['opened', 'joined', 'joined']);
  });

  it('holds the call for joiners once the kept start reaches its bound, and lets it go when they are done', async () => {
    const { shared, calls } = sharedList();
    const first = shared.open();
    first.on('data', () => undefined);
    const ticket = shared.reserve();
    const size = 64 * 1024;
    const parts = chunks(Math.ceil((2 * joinHeadBytes) / size), size);
    send(calls[0]!, parts, '5');
    await tick();
    await tick();
    // The call stopped near joinHeadBytes, for the joiner still checking.
    expect(calls[0]!.isPaused()).toBe(true);
    const joined = ticket.attach()!;
    expect(await readAll(joined)).toBe(parts.join(''));
  });

  it('a joiner that gives up, or comes after the start was dropped, gets nothing; the others are unaffected', async () => {
    const { shared, calls } = sharedList();
    const first = shared.open();
    const gaveUp = shared.reserve();
    const late = shared.reserve();
    const parts = chunks(5, 100);
    send(calls[0]!, parts, '6');
    gaveUp.cancel();
    expect(gaveUp.attach()).toBeNull();
    const body = readAll(first);
    expect(late.attach()).not.toBeNull();
    expect(await body).toBe(parts.join(''));
  });

  it('a read that stops while more than maxLagBytes behind is detached after maxHoldMs onto a call of its own, skipping what it has', async () => {
    const { calls, kinds, fast, slow, parts } = twoReads();
    // The fast reader reads it all while the slow one reads nothing.
    expect(await readAll(fast)).toBe(parts.join(''));
    expect(kinds).toEqual(['opened', 'joined', 'detached']);
    expect(calls).toHaveLength(2);
    // Its own call answers the same version: the bytes it already has are skipped.
    send(calls[1]!, parts, '7');
    expect(await readAll(slow)).toBe(parts.join(''));
  });

  it('a slower read holds the call once maxLagBytes behind (this process holds no more), and is not detached while it keeps reading', async () => {
    const { calls, kinds, fast, slow, size, parts } = twoReads();
    let mostBehind = 0;
    const slowly = (async (): Promise<string> => {
      const got: Buffer[] = [];
      // Each part is everything buffered for this read when it took it.
      for await (const part of slow) {
        mostBehind = Math.max(mostBehind, (part as Buffer).length);
        got.push(part as Buffer);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      return Buffer.concat(got).toString();
    })();
    const [fastBody, slowBody] = await Promise.all([readAll(fast), slowly]);
    expect([fastBody, slowBody]).toEqual([parts.join(''), parts.join('')]);
    expect(mostBehind).toBeGreaterThan(maxLagBytes - 2 * size);
    expect(mostBehind).toBeLessThanOrEqual(maxLagBytes + size);
    expect(kinds).toEqual(['opened', 'joined']);
    expect(calls).toHaveLength(1);
  });

  it('a detached read whose own call answers another version fails (its response is cut)', async () => {
    const { calls, fast, slow, parts } = twoReads();
    await readAll(fast);
    send(calls[1]!, parts, '8');
    await expect(readAll(slow)).rejects.toThrow(/changed \(version 7 → 8\)/);
  });

  it('cancels the call when its last read goes away, and fails every read when the call fails', async () => {
    const gone = sharedList();
    const only = gone.shared.open();
    gone.calls[0]!.push(streamChunk('[1', '3'));
    await gone.shared.version;
    expect(gone.shared.joinable).toBe(true);
    only.destroy();
    expect(gone.calls[0]!.cancelled).toBe(true);
    // A read that comes now opens a call of its own.
    expect(gone.shared.joinable).toBe(false);
    expect(gone.closed()).toBe(true);

    const failing = sharedList();
    const reads = [failing.shared.open(), failing.shared.reserve().attach()!].map(readAll);
    failing.calls[0]!.push(streamChunk('[1', '3'));
    failing.calls[0]!.finish(grpc.status.UNAVAILABLE);
    for (const read of reads) await expect(read).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
  });

  it('a call failing before its first message rejects the version; the reads nobody took yet do not throw', async () => {
    const { shared, calls } = sharedList();
    const opener = shared.open();
    const ticket = shared.reserve();
    calls[0]!.finish(grpc.status.UNAVAILABLE);
    await expect(shared.version).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    await tick();
    expect(opener.destroyed).toBe(true);
    expect(ticket.attach()).toBeNull();
  });

  it('keeps the call while a joiner still checks, though the read that opened it went away', async () => {
    const { shared, calls } = sharedList();
    const opener = shared.open();
    const ticket = shared.reserve();
    opener.destroy();
    expect(calls[0]!.cancelled).toBe(false);
    const parts = chunks(3, 10);
    send(calls[0]!, parts, '2');
    expect(await readAll(ticket.attach()!)).toBe(parts.join(''));
  });

  it('cancels the call when the read that opened it went away and the last joiner gave up', async () => {
    const { shared, calls, closed } = sharedList();
    const opener = shared.open();
    const ticket = shared.reserve();
    calls[0]!.push(streamChunk('[1', '3'));
    await shared.version;
    opener.destroy();
    expect(calls[0]!.cancelled).toBe(false);
    // Its check found the list changed: nothing reads the call any more.
    ticket.cancel();
    expect(calls[0]!.cancelled).toBe(true);
    expect(shared.joinable).toBe(false);
    expect(closed()).toBe(true);
  });
});
