import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { streamedListHighWaterMark, type StreamedTaskList } from './streamed-task-list.js';

/**
 * Bytes of a shared list's start kept so that reads of the same list may join it: reads join while
 * less has come, and past it the call waits for those still checking that its snapshot is current
 * (one small gRPC call each, coalesced).
 */
export const joinHeadBytes = 1024 * 1024;
/**
 * How far (bytes buffered and not yet taken by its client) a read of a shared list may fall behind
 * the others: within it the call goes at the pace of its fastest read; a read further behind holds
 * the call (so one slow or stalled client makes this process hold at most this much per list).
 */
export const maxLagBytes = 2 * 1024 * 1024;
/**
 * How long in all a read more than `maxLagBytes` behind may hold the call while another read waits
 * for data; then it is detached onto a call of its own.
 */
export const maxHoldMs = 500;

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
 * fastest read as long as no read is more than `maxLagBytes` behind; a read further behind holds it,
 * and once it has held the others up for `maxHoldMs` in all, it is detached onto a call of its own,
 * which skips the bytes it already has and must answer the same version (else that read is cut, as a
 * failed stream is). So a client that stops reading costs this process at most `maxLagBytes` and the
 * others at most `maxHoldMs`.
 *
 * Reads join while less than `joinHeadBytes` of the list has come (`joinable`), and each joiner's
 * caller checks that the snapshot is still the list's current version before it attaches (a
 * joiner's request may have come after the snapshot was taken, after a write it made). The chunks
 * received so far are kept for them, and a joiner starts with them; past `joinHeadBytes` they are
 * dropped once no joiner is still checking (the call waits for those).
 */
export class SharedTaskList {
  readonly version: Promise<string>;
  private readonly reads = new Set<SharedListRead>();
  /** Every chunk received so far, while joiners may still attach (undefined after). */
  private head: Buffer[] | undefined = [];
  private headBytes = 0;
  private reserved = 0;
  private ended = false;
  /** The call failed, or was cancelled because nothing reads it any more. */
  private stopped = false;
  /** Since when reads more than `maxLagBytes` behind (`holders`) hold the call while another waits. */
  private holdSince: number | undefined;
  private holders: SharedListRead[] = [];
  private holdTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: StreamedTaskList,
    private readonly reopen: ReopenTaskList,
    private readonly events: { joiningClosed: () => void; read: (kind: SharedReadKind) => void },
  ) {
    this.version = source.version;
    source.on('data', (chunk: Buffer) => this.onChunk(chunk));
    source.on('end', () => {
      this.ended = true;
      clearTimeout(this.holdTimer);
      for (const read of this.reads) read.push(null);
      this.closeJoiningIfDone();
    });
    source.on('error', (error: Error) => {
      this.stopped = true;
      clearTimeout(this.holdTimer);
      for (const read of [...this.reads]) read.destroy(error);
      this.closeJoining();
    });
  }

  /**
   * Paused until the joiners still checking attach: the start kept for them reached `joinHeadBytes`
   * (with no joiner left, `closeJoiningIfDone` has dropped it).
   */
  private get holding(): boolean {
    return this.head !== undefined && this.headBytes >= joinHeadBytes;
  }

  /** True while new reads may join: less than `joinHeadBytes` has come, and the call has not ended. */
  get joinable(): boolean {
    return this.head !== undefined && this.headBytes < joinHeadBytes && !this.ended && !this.stopped;
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
        const read = head === undefined || this.stopped ? null : this.add(new SharedListRead(this));
        if (read !== null && head !== undefined) {
          this.events.read('joined');
          for (const chunk of head) read.deliver(chunk);
          if (this.ended) read.push(null);
        }
        this.closeJoiningIfDone();
        this.stopIfUnread();
        this.pace();
        return read;
      },
      cancel: () => {
        if (!settle()) return;
        this.closeJoiningIfDone();
        this.stopIfUnread();
      },
    };
  }

  /** A read's client wants more. */
  resume(): void {
    this.pace();
  }

  /** A read's client took some of its buffer: if it was holding the call, it may flow again. */
  taken(read: SharedListRead): void {
    if (this.holders.includes(read) && read.readableLength <= maxLagBytes) this.pace();
  }

  /** A read went away (its client did): the call is cancelled once nothing reads or waits to join it. */
  leave(read: SharedListRead): void {
    if (!this.reads.delete(read)) return;
    this.stopIfUnread();
    this.pace();
  }

  private add(read: SharedListRead): SharedListRead {
    this.reads.add(read);
    return read;
  }

  private onChunk(chunk: Buffer): void {
    if (this.head !== undefined) {
      this.head.push(chunk);
      this.headBytes += chunk.length;
      this.closeJoiningIfDone();
    }
    for (const read of this.reads) read.deliver(chunk);
    this.stopIfUnread();
    this.pace();
  }

  /**
   * Whether the call flows: while a read wants data (its client asked for more), no read
   * is more than `maxLagBytes` behind and no joiner is awaited past `joinHeadBytes`. Time a read
   * further behind holds the call while another wants data is counted against it; past `maxHoldMs`
   * it is detached.
   */
  private pace(): void {
    const now = performance.now();
    if (this.holdSince !== undefined) {
      for (const read of this.holders) read.heldOthersMs += now - this.holdSince;
      this.holdSince = undefined;
      this.holders = [];
    }
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    if (this.ended || this.stopped) return;
    for (const read of [...this.reads]) {
      if (read.heldOthersMs >= maxHoldMs) {
        this.reads.delete(read);
        this.events.read('detached');
        read.detach(this.reopen(), this.version);
      }
    }
    const reads = [...this.reads];
    const behind = reads.filter((read) => read.readableLength > maxLagBytes);
    const wanting = reads.some((read) => read.wants);
    if (!wanting || behind.length > 0 || this.holding) {
      this.source.pause();
      if (wanting && behind.length > 0 && !this.holding) {
        this.holdSince = now;
        this.holders = behind;
        const left = maxHoldMs - Math.max(...behind.map((read) => read.heldOthersMs));
        this.holdTimer = setTimeout(() => this.pace(), Math.max(1, Math.ceil(left)));
        this.holdTimer.unref();
      }
    } else {
      this.source.resume();
    }
  }

  /** The start is dropped once no read may join any more and no joiner waits for it. */
  private closeJoiningIfDone(): void {
    if (this.reserved === 0 && (this.headBytes >= joinHeadBytes || this.ended || this.stopped)) this.closeJoining();
  }

  private closeJoining(): void {
    if (this.head === undefined) return;
    this.head = undefined;
    this.headBytes = 0;
    this.events.joiningClosed();
    this.stopIfUnread();
    this.pace();
  }

  /** Cancels the call once nothing reads it and no joiner waits for its start; nothing joins it after. */
  private stopIfUnread(): void {
    if (this.reads.size > 0 || this.ended || this.stopped || (this.head !== undefined && this.reserved > 0)) return;
    this.stopped = true;
    clearTimeout(this.holdTimer);
    this.source.destroy();
    this.closeJoining();
  }
}

/**
 * One client's read of a shared list (the response body): the chunks of the shared call, or after
 * it fell behind, of a call of its own (`detach`).
 */
export class SharedListRead extends Readable {
  /** Bytes of the list pushed to this read so far. */
  private delivered = 0;
  /** Its client asked for more (`_read`) and nothing was pushed since. */
  wants = false;
  /** How long this read, more than `maxLagBytes` behind, held the shared call while another read waited. */
  heldOthersMs = 0;
  /** Its call of its own once detached (its chunks come from the shared call until then). */
  private own: StreamedTaskList | undefined;
  /** The call of its own answered the shared version: its chunks flow here. */
  private ownChecked = false;

  constructor(private readonly shared: SharedTaskList) {
    super({ highWaterMark: streamedListHighWaterMark });
    // A call failing before the response took this read fails the request through the version
    // (TaskListReader destroys the read then); its 'error' must not crash the process meanwhile.
    this.on('error', () => undefined);
  }

  /** Pushes a chunk of the shared call; false when this read's buffer is full. */
  deliver(chunk: Buffer): boolean {
    this.delivered += chunk.length;
    this.wants = false;
    return this.push(chunk);
  }

  /**
   * Continues on `own`, a call of its own: the bytes already delivered are skipped, and the call must
   * answer the version of the shared one (the same snapshot's bytes), else this read fails.
   */
  detach(own: StreamedTaskList, version: Promise<string>): void {
    this.own = own;
    let skip = this.delivered;
    Promise.all([version, own.version]).then(
      ([expected, answered]) => {
        if (this.destroyed) return;
        if (answered !== expected) {
          this.destroy(new Error(`task list changed (version ${expected} → ${answered}) while a slow reader was behind`));
          return;
        }
        this.ownChecked = true;
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

  override read(size?: number): unknown {
    const taken: unknown = super.read(size);
    if (this.own === undefined) this.shared.taken(this);
    return taken;
  }

  override _read(): void {
    this.wants = true;
    if (this.own === undefined) this.shared.resume();
    else if (this.ownChecked) this.own.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.own?.destroy();
    this.shared.leave(this);
    callback(error);
  }
}
