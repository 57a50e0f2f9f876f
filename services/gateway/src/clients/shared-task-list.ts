import { Readable } from 'node:stream';
import { streamedListHighWaterMark, type StreamedTaskList } from './streamed-task-list.js';

/**
 * Bytes of a shared list's start kept for reads still checking that its snapshot is current
 * (`SharedTaskList.reserve`): past it the call waits for them (one small gRPC call each, coalesced).
 */
export const joinHeadBytes = 1024 * 1024;
/**
 * How far (bytes buffered and not yet taken by its client) a read of a shared list may fall behind
 * the call before it is given a call of its own: the call goes at the pace of its fastest read, so
 * this bounds what one slow or stalled client holds here, and it never holds the others back.
 */
export const maxLagBytes = 2 * 1024 * 1024;

/** Opens a new StreamTasks call of the same list (a read that fell behind continues on it). */
export type ReopenTaskList = () => StreamedTaskList;

/** How a read of a large list was served (the metric `task_list_stream_reads_total`). */
export type SharedReadKind = 'opened' | 'joined' | 'detached';

/** A read waiting to join a shared list: attach it once its snapshot was found current, or cancel it. */
export interface JoinTicket {
  /** The read, replaying the list from its start; null when too late (the start is gone, or the call failed). */
  attach(): SharedListRead | null;
  cancel(): void;
}

/**
 * One StreamTasks call (one snapshot) read by every read of the same list that joined it: each
 * chunk is pushed to all of them (the same Buffer, never copied). The call goes at the pace of its
 * fastest read; a read that falls more than `maxLagBytes` behind is detached onto a call of its
 * own, which skips the bytes it already has and must answer the same version (else that read is
 * cut, as a failed stream is). So a client that stops reading holds at most `maxLagBytes` here and
 * delays nobody.
 *
 * Reads join only while the call has sent nothing (`joinable`), and each joiner's caller checks that
 * the snapshot is still the list's current version before it attaches (a joiner's request may have
 * come after the snapshot was taken, after a write it made). The chunks received so far are kept for
 * them until the last has attached or given up; past `joinHeadBytes` the call waits for them.
 */
export class SharedTaskList {
  readonly version: Promise<string>;
  private readonly reads = new Set<SharedListRead>();
  /** Every chunk received so far, while joiners may still attach (undefined after). */
  private head: Buffer[] | undefined = [];
  private headBytes = 0;
  private received = 0;
  private reserved = 0;
  /** Paused until the joiners attached: the start kept for them reached `joinHeadBytes`. */
  private holding = false;
  private ended = false;
  private failed = false;

  constructor(
    private readonly source: StreamedTaskList,
    private readonly reopen: ReopenTaskList,
    private readonly events: { joiningClosed: () => void; read: (kind: SharedReadKind) => void },
  ) {
    this.version = source.version;
    source.on('data', (chunk: Buffer) => this.onChunk(chunk));
    source.on('end', () => {
      this.ended = true;
      for (const read of this.reads) read.push(null);
      this.closeJoiningIfDone();
    });
    source.on('error', (error: Error) => {
      this.failed = true;
      for (const read of [...this.reads]) read.destroy(error);
      this.closeJoining();
    });
  }

  /** True while new reads may join: the call has sent nothing yet and has not failed. */
  get joinable(): boolean {
    return this.head !== undefined && this.received === 0 && !this.failed;
  }

  /** The read of the request that opened the call (its snapshot is taken after that request came). */
  open(): SharedListRead {
    this.events.read('opened');
    return this.add(new SharedListRead(this));
  }

  /** Holds the list's start for one more joiner until it attaches or cancels. */
  reserve(): JoinTicket {
    this.reserved += 1;
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      this.reserved -= 1;
      return true;
    };
    return {
      attach: () => {
        if (!settle()) return null;
        const head = this.head;
        const read = head === undefined || this.failed ? null : this.add(new SharedListRead(this));
        if (read !== null && head !== undefined) {
          this.events.read('joined');
          for (const chunk of head) read.deliver(chunk);
          if (this.ended) read.push(null);
        }
        this.closeJoiningIfDone();
        return read;
      },
      cancel: () => {
        if (settle()) this.closeJoiningIfDone();
      },
    };
  }

  /** A read's client wants more: the call flows again. */
  resume(): void {
    if (!this.ended && !this.failed && !this.holding) this.source.resume();
  }

  /** A read went away (its client did): the call is cancelled once nothing reads or waits to join it. */
  leave(read: SharedListRead): void {
    if (!this.reads.delete(read)) return;
    this.stopIfUnread();
  }

  private add(read: SharedListRead): SharedListRead {
    this.reads.add(read);
    return read;
  }

  private onChunk(chunk: Buffer): void {
    this.received += chunk.length;
    if (this.head !== undefined) {
      this.head.push(chunk);
      this.headBytes += chunk.length;
      this.closeJoiningIfDone();
      if (this.head !== undefined && this.headBytes >= joinHeadBytes) this.holding = true;
    }
    let wanted = false;
    for (const read of this.reads) if (read.deliver(chunk)) wanted = true;
    for (const read of [...this.reads]) {
      if (read.readableLength > maxLagBytes) {
        this.reads.delete(read);
        this.events.read('detached');
        read.detach(this.reopen(), this.version);
      }
    }
    if (!wanted || this.reads.size === 0 || this.holding) this.source.pause();
    this.stopIfUnread();
  }

  /** Nothing joins after the first chunk; the start is dropped once no joiner waits for it. */
  private closeJoiningIfDone(): void {
    if (this.reserved === 0 && (this.received > 0 || this.ended || this.failed)) this.closeJoining();
  }

  private closeJoining(): void {
    if (this.head === undefined) return;
    this.head = undefined;
    this.headBytes = 0;
    this.events.joiningClosed();
    if (this.holding) {
      this.holding = false;
      this.resume();
    }
    this.stopIfUnread();
  }

  private stopIfUnread(): void {
    if (this.reads.size === 0 && (this.head === undefined || this.reserved === 0) && !this.ended) this.source.destroy();
  }
}

/**
 * One client's read of a shared list (the response body): the chunks of the shared call, or after
 * it fell behind, of a call of its own (`detach`).
 */
export class SharedListRead extends Readable {
  /** Bytes of the list pushed to this read so far. */
  private delivered = 0;
  /** Where this read's chunks come from: the shared call, or (`detach`) its own once checked. */
  private from: 'shared' | 'checking' | StreamedTaskList = 'shared';
  private own: StreamedTaskList | undefined;

  constructor(private readonly shared: SharedTaskList) {
    super({ highWaterMark: streamedListHighWaterMark });
  }

  /** Pushes a chunk of the shared call; false when this read's buffer is full. */
  deliver(chunk: Buffer): boolean {
    this.delivered += chunk.length;
    return this.push(chunk);
  }

  /**
   * Continues on `own`, a call of its own: the bytes already delivered are skipped, and the call must
   * answer the version of the shared one (the same snapshot's bytes), else this read fails.
   */
  detach(own: StreamedTaskList, version: Promise<string>): void {
    this.own = own;
    this.from = 'checking';
    let skip = this.delivered;
    Promise.all([version, own.version]).then(
      ([expected, answered]) => {
        if (this.destroyed) return;
        if (answered !== expected) {
          this.destroy(new Error(`task list changed (version ${expected} → ${answered}) while a slow reader was behind`));
          return;
        }
        this.from = own;
        own.on('data', (chunk: Buffer) => {
          let rest = chunk;
          if (skip > 0) {
            const skipped = Math.min(skip, rest.length);
            skip -= skipped;
            rest = rest.subarray(skipped);
            if (rest.length === 0) return;
          }
          if (!this.push(rest)) own.pause();
        });
        own.on('end', () => {
          if (skip > 0) this.destroy(new Error('task list re-read was shorter than what was already sent'));
          else this.push(null);
        });
      },
      (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
    );
    own.on('error', (error: Error) => this.destroy(error));
  }

  override _read(): void {
    if (this.from === 'shared') this.shared.resume();
    else if (this.from !== 'checking') this.from.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.own?.destroy();
    this.shared.leave(this);
    callback(error);
  }
}
